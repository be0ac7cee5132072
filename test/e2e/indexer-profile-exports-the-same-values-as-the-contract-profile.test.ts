/**
 * Under `--profile indexer` (the open-source indexer's value encodings and aggregation rows) the
 * exporter writes the same values as under the contract profile: the demo job as shipped, an
 * events job over the `rich` contract (tuples, fixed and dynamic arrays, bytes, bytesN, negative
 * and > 2^53 integers; named and unnamed signatures) and aggregates grouped by day and by
 * block_timestamp, which also equal a recomputation from the sandbox's rows.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RICH_EVENT_SIGNATURE, startSandbox, type Sandbox, type SandboxOptions } from '@insight-export/sandbox';
import { SANDBOX_PROFILES } from '@insight-export/sandbox';
import type { RichArgs } from '@insight-export/sandbox';
import type { EventRecord } from '../../src/source/records.js';
import { exportJob, type JsonRow } from '../datasets/export-helpers.js';

const UNNAMED_SIGNATURE =
  'Settled(address indexed, int256 indexed, bytes8 indexed, (uint256,int128,bytes3,bytes), uint256[2], bytes, int32)';

async function pair(opts: SandboxOptions): Promise<[Sandbox, Sandbox]> {
  return [await startSandbox(opts), await startSandbox({ ...opts, ...SANDBOX_PROFILES.indexer })];
}

/** Rows of every table, by table, in file order. */
async function tables(s: Sandbox, yaml: string): Promise<Record<string, JsonRow[]>> {
  const res = await exportJob(s, yaml);
  expect(res.report.status, JSON.stringify(res.report).slice(0, 3000)).toBe('succeeded');
  const out: Record<string, JsonRow[]> = {};
  for (const table of new Set(res.files.map((f) => f.split('/')[0]!))) out[table] = await res.rows(`${table}/`);
  return out;
}

describe('the indexer profile exports the same values as the contract profile', () => {
  let plain: [Sandbox, Sandbox];
  let rich: [Sandbox, Sandbox];
  beforeAll(async () => {
    plain = await pair({ seed: 42 });
    rich = await pair({ seed: 7, transactions: 6_000, richContract: true });
  });
  afterAll(async () => {
    for (const s of [...(plain ?? []), ...(rich ?? [])]) await s.close();
  });

  it('the demo job as shipped: every decoded column equal, wallet and events', async () => {
    const text = await readFile(path.join(import.meta.dirname, '../../jobs/demo.yaml'), 'utf8');
    const job = text.replace(/^output:[\s\S]*$/m, '').replace(/^\s*base_url: sandbox\s*$/m, '');
    const [contract, indexer] = [await tables(plain[0], job), await tables(plain[1], job)];
    expect(Object.keys(indexer).sort()).toEqual(Object.keys(contract).sort());
    const txTable = Object.keys(contract).find((t) => t.startsWith('transactions'))!;
    const decoded = contract[txTable]!.filter((r) => r.decode_status === 'ok');
    expect(decoded.length).toBeGreaterThan(100);
    expect(decoded.some((r) => JSON.parse(r.decoded_inputs_json).data !== undefined)).toBe(true); // bytes, base64 under indexer
    for (const table of Object.keys(contract)) expect(indexer[table], table).toEqual(contract[table]);
  });

  it('an events job with tuple, array, bytes and negative-int arguments: every arg column equal and exact', async () => {
    const contracts = rich[0].data.contracts.filter((c) => c.kind === 'rich');
    const job = (signature: string) => `name: rich-events
source: { chains: [1, 8453, 42161] }
targets:
${contracts.map((c) => `  - contract: "${c.address}"\n    chains: [${c.chainId}]\n    events: ["${signature}"]`).join('\n')}
range: { from: "2024-02-01", to: "2024-02-04", chunk: 1d }
decode: true
`;
    const unnamed = [await tables(rich[0], job(UNNAMED_SIGNATURE)), await tables(rich[1], job(UNNAMED_SIGNATURE))];
    expect(Object.values(unnamed[0]!)[0]!.every((r) => r.decode_status === 'ok' && r.arg_1 !== null)).toBe(true);
    expect(unnamed[1]).toEqual(unnamed[0]);
    const [contract, indexer] = [await tables(rich[0], job(RICH_EVENT_SIGNATURE)), await tables(rich[1], job(RICH_EVENT_SIGNATURE))];
    const named = Object.keys(contract).find((t) => t.startsWith('events'))!;
    const rows = contract[named]!;
    expect(rows.length).toBeGreaterThan(50);
    // exact against the arguments the sandbox encoded
    const truth = new Map<string, EventRecord>();
    for (const c of contracts)
      for (const e of rich[0].data.logs(c.chainId)) if (e.address === c.address) truth.set(`${e.chain_id}:${e.transaction_hash}`, e);
    expect(rows.every((r) => r.decode_status === 'ok')).toBe(true);
    expect(rows.some((r) => r.arg_delta.startsWith('-'))).toBe(true);
    expect(rows.some((r) => BigInt(JSON.parse(r.arg_info).amount) > 2n ** 53n)).toBe(true);
    for (const r of rows) {
      expect(truth.has(`${r.chain_id}:${r.transaction_hash}`)).toBe(true);
      // the arguments the sandbox encoded, in their canonical forms
      const chain = (rich[0].data as any).chainState(r.chain_id);
      const a: RichArgs = chain.richArgs(chain.rowOfHash(r.transaction_hash));
      expect({
        account: r.arg_account,
        delta: r.arg_delta,
        code: r.arg_code,
        info: JSON.parse(r.arg_info),
        window: JSON.parse(r.arg_window),
        payload: r.arg_payload,
        skew: r.arg_skew,
      }).toEqual({
        account: a.account,
        delta: a.delta.toString(),
        code: a.code,
        info: { amount: a.info.amount.toString(), change: a.info.change.toString(), flags: a.info.flags, note: a.info.note },
        window: a.window.map(String),
        payload: a.payload,
        skew: String(a.skew),
      });
    }
    expect(Object.keys(indexer).sort()).toEqual(Object.keys(contract).sort());
    for (const table of Object.keys(contract)) expect(indexer[table], table).toEqual(contract[table]);
  });

  it('wallet transactions calling the rich contract (tuples, bytes32[], int64 beyond 2^53, bytes4): decoded_inputs_json equal and exact', async () => {
    const alice = rich[0].data.wallets[0]!;
    const job = `name: rich-calls
source: { chains: [1, 8453, 42161] }
targets:
  - wallet: ${alice.address}
    datasets: [transactions]
range: { from: "2024-02-01", to: "2024-02-04", chunk: 1d }
decode: true
`;
    const [contract, indexer] = [await tables(rich[0], job), await tables(rich[1], job)];
    const table = Object.keys(contract)[0]!;
    const settles = contract[table]!.filter((r) => r.decoded_function_name === 'settle');
    expect(settles.length).toBeGreaterThan(10);
    for (const r of settles) {
      const chain = (rich[0].data as any).chainState(r.chain_id);
      const a: RichArgs = chain.richArgs(chain.rowOfHash(r.hash));
      expect(r.decode_status).toBe('ok');
      // types-only signature: tuple components by position
      expect(JSON.parse(r.decoded_inputs_json)).toEqual({
        order: [a.account, a.delta.toString(), a.limits.map(String), a.memo],
        refs: a.refs,
        shift: a.shift.toString(),
        tag: a.tag,
      });
    }
    expect(settles.some((r) => BigInt(JSON.parse(r.decoded_inputs_json).shift) < -(2n ** 53n))).toBe(true);
    expect(indexer[table]).toEqual(contract[table]);
  });

  it('aggregates grouped by day and by block_timestamp: equal under both profiles and to a recomputation', async () => {
    const c = rich[0].data.contracts.find((x) => x.kind === 'rich' && x.chainId === 1)!;
    const job = `name: rich-aggregates
source: { chains: [1] }
targets:
  - contract: "${c.address}"
    events: ["${RICH_EVENT_SIGNATURE}"]
    datasets: [aggregates]
aggregates:
  group_by: ["toDate(block_timestamp) as day", block_timestamp]
  aggregate: ["count() as n", "sum(block_number) as blocks", "max(log_index) as last_log"]
range: { from: "2024-02-01", to: "2024-02-04", chunk: 1d }
`;
    const [contract, indexer] = [await tables(rich[0], job), await tables(rich[1], job)];
    const table = Object.keys(contract)[0]!;
    expect(indexer[table]).toEqual(contract[table]);
    const logs = [...rich[0].data.logs(1)].filter((e) => e.address === c.address && e.block_timestamp < Date.parse('2024-02-04') / 1000);
    const groups = new Map<number, EventRecord[]>();
    for (const e of logs) groups.set(e.block_timestamp, [...(groups.get(e.block_timestamp) ?? []), e]);
    const rows = contract[table]!;
    expect(rows.length).toBe(groups.size);
    for (const r of rows) {
      const g = groups.get(r.block_timestamp)!;
      expect(r.day).toBe(new Date(r.block_timestamp * 1000).toISOString().slice(0, 10));
      expect(r.n).toBe(g.length);
      expect(r.blocks).toBe(g.reduce((a, e) => a + e.block_number, 0));
      expect(r.last_log).toBe(Math.max(...g.map((e) => e.log_index)));
    }
  });
});
