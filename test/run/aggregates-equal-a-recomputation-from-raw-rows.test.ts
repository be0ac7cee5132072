import { describe, expect, it } from 'vitest';
import type { EventRecord, TransactionRecord } from '../../src/source/records.js';
import { useSandbox } from '../helpers/sandbox.js';
import { exportJob, type JsonRow } from '../datasets/export-helpers.js';

const sandbox = useSandbox({ seed: 42 });

const iso = (ts: number) => new Date(ts * 1000).toISOString().replace('.000Z', 'Z');
const day = (ts: number) => iso(ts).slice(0, 10);
const maxBig = (values: (string | null)[]) =>
  values.filter((v): v is string => v !== null).reduce<bigint | null>((m, v) => (m === null || BigInt(v) > m ? BigInt(v) : m), null);

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push(it);
  }
  return out;
}

function expectUniqueItemIds(rows: JsonRow[]) {
  expect(new Set(rows.map((r) => r.item_id)).size).toBe(rows.length);
  for (const r of rows) expect(r.item_id).toMatch(/^[0-9a-f]{32}$/);
}

describe('the aggregates dataset', () => {
  it("a wallet's transactions per chain, 12-hour window, day and status equal a recomputation from the raw rows", async () => {
    const alice = sandbox.data.wallets[0]!;
    const HALF_DAY = 43_200;
    const res = await exportJob(
      sandbox,
      `name: wallet-aggregates
source: { chains: [1, 8453, 42161] }
targets:
  - wallet: ${alice.name}
    datasets: [aggregates]
aggregates:
  group_by: [chain_id, "toDate(block_timestamp) as day", status]
  aggregate: ["count() as tx_count", "sum(value) as value_sum", "sum(gas_used) as gas", "min(block_number) as first_block", "max(gas_price) as max_gas_price", "avg(gas_used) as avg_gas"]
range: { from: "2024-02-01", to: "2024-02-04", chunk: 12h }
`,
    );
    const TO = Date.UTC(2024, 1, 4) / 1000;
    expect(res.report.status).toBe('succeeded');
    const rows = await res.rows('aggregates_transactions_');
    expect(res.files.every((f) => /^aggregates_transactions_[0-9a-f]{8}\/chain_id=\d+\/date=\d{4}-\d{2}-\d{2}\//.test(f))).toBe(true);

    const txs: TransactionRecord[] = [];
    for (const c of sandbox.data.chains) {
      for (const t of sandbox.data.transactions(c.chainId))
        if ((t.from_address === alice.address || t.to_address === alice.address) && t.block_timestamp < TO) txs.push(t);
    }
    const windowOf = (t: TransactionRecord) => t.block_timestamp - (t.block_timestamp % HALF_DAY);
    const groups = groupBy(txs, (t) => `${t.chain_id}|${windowOf(t)}|${t.status}`);
    expect(groups.size).toBeGreaterThan(20);
    expect(rows).toHaveLength(groups.size);

    for (const row of rows) {
      const group = groups.get(`${row.chain_id}|${row.window_start}|${row.status}`);
      expect(group, JSON.stringify(row)).toBeDefined();
      const g = group!;
      const start = windowOf(g[0]!);
      expect(row).toEqual({
        item_id: row.item_id,
        chain_id: g[0]!.chain_id,
        window_start: start,
        window_end: start + HALF_DAY,
        window_start_time: iso(start),
        day: day(start),
        status: g[0]!.status,
        tx_count: g.length,
        value_sum: g.reduce((a, t) => a + BigInt(t.value), 0n).toString(),
        gas: g.reduce((a, t) => a + (t.gas_used ?? 0), 0),
        first_block: Math.min(...g.map((t) => t.block_number)),
        max_gas_price: maxBig(g.map((t) => t.gas_price))?.toString() ?? null,
        avg_gas: row.avg_gas,
      });
      expect(typeof row.avg_gas).toBe('string');
      expect(Number(row.avg_gas)).toBeCloseTo(g.reduce((a, t) => a + (t.gas_used ?? 0), 0) / g.length, 6);
    }
    expectUniqueItemIds(rows);
    // the date partition is the window's UTC day
    for (const f of res.files) {
      const start = Number(/__(\d{12})_\d{12}__/.exec(f)![1]);
      expect(f).toContain(`/date=${day(start)}/`);
    }
  });

  it("a token's Transfer events per block window (block axis) equal a recomputation; window_start_time is the start block's time", async () => {
    const token = sandbox.data.contracts.find((c) => c.chainId === 1 && c.kind === 'erc20')!;
    const chain = sandbox.data.chain(1)!;
    const CHUNK = 1_000;
    const from = chain.firstBlock - (chain.firstBlock % CHUNK) + CHUNK;
    const to = from + 5 * CHUNK;
    const res = await exportJob(
      sandbox,
      `name: token-aggregates
source: { chains: [1] }
targets:
  - contract: "${token.address}"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
    datasets: [aggregates]
aggregates:
  group_by: [topic_2]
  aggregate: ["count() as transfers", "min(block_number) as first_block", "max(log_index)"]
range: { from: ${from}, to: ${to}, chunk: ${CHUNK} }
`,
    );
    expect(res.report.status).toBe('succeeded');
    const rows = await res.rows('aggregates_events_transfer_ddf252ad_');
    const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
    const logs: EventRecord[] = [...sandbox.data.logs(1)].filter(
      (l) => l.address === token.address && l.topics[0] === TRANSFER && l.block_number >= from && l.block_number < to,
    );
    const windowOf = (l: EventRecord) => l.block_number - (l.block_number % CHUNK);
    const groups = groupBy(logs, (l) => `${windowOf(l)}|${l.topics[2]}`);
    expect(groups.size).toBeGreaterThan(10);
    expect(rows).toHaveLength(groups.size);
    for (const row of rows) {
      const g = groups.get(`${row.window_start}|${row.topic_2}`)!;
      expect(g, JSON.stringify(row)).toBeDefined();
      const start = windowOf(g[0]!);
      expect(row).toEqual({
        item_id: row.item_id,
        chain_id: 1,
        window_start: start,
        window_end: start + CHUNK,
        window_start_time: iso(sandbox.data.block(1, start)!.block_timestamp),
        topic_2: g[0]!.topics[2],
        transfers: g.length,
        first_block: Math.min(...g.map((l) => l.block_number)),
        max_log_index: Math.max(...g.map((l) => l.log_index)),
      });
    }
    expectUniqueItemIds(rows);
  });

  it('a bad expression stops the run before anything is requested or written, naming the job field', async () => {
    const alice = sandbox.data.wallets[0]!;
    sandbox.resetStats();
    const err = await exportJob(
      sandbox,
      `name: bad-aggregates
source: { chains: [1] }
targets:
  - wallet: "${alice.address}"
    datasets: [aggregates]
aggregates:
  aggregate: ["count() as n", "sum(gas_usd) as gas"]
range: { from: "2024-02-01", to: "2024-02-02" }
`,
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'AggregateExpressionError', exitCode: 2 });
    expect((err as Error).message).toContain('Unknown column "gas_usd"');
    expect((err as Error).message).toContain('aggregates.aggregate[1], applied to targets[0] (wallet transactions)');
    expect(sandbox.stats().byRoute.transactions ?? 0).toBe(0);
  });
});
