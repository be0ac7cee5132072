/**
 * Issue 8: a real EVM node is ground truth nobody on this team wrote. anvil gets the OpenZeppelin
 * 4.9.6 ERC-20 and ERC-721 presets and > 500 transfers from ten accounts (some legacy, some with
 * access lists, some reverting, one EIP-7702); `sandbox --rpc` loads the chain and follows it by
 * polling; the pipeline (runJob) exports wallet transactions and both tokens' Transfer events; every
 * row read back with DuckDB equals what the node returns for the same block, transaction, receipt
 * and log (viem's own decoding of eth_getBlockByNumber / eth_getTransactionReceipt / eth_getLogs),
 * and the decoded columns equal what the test sent.
 */
import { eventTableForSignature } from '../../src/datasets/events.js';
import { join } from 'node:path';
import { parseAbi, parseAbiItem, type AbiEvent } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { startRpcSandbox, type RpcSandbox } from '@insight-export/sandbox/rpc';
import { exportJob, readTable, type CanonRow } from '../helpers/export.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { ChainActivity, ERC20_ARTIFACT, ERC721_ARTIFACT, type Sent } from './helpers/activity.js';
import { useAnvil } from './helpers/anvil.js';
import { NodeTruth, expectedBlockRecord, expectedEventRow, expectedTransactionRow } from './helpers/node-truth.js';

const CHAIN = 31337;
const ERC20_TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const ERC721_TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 indexed tokenId)';
const DECODE_COLUMNS = ['decoded_function_name', 'decoded_signature', 'decoded_inputs_json', 'decode_status'];

const anvil = useAnvil();
let act: ChainActivity;
let sandbox: RpcSandbox;
let truth: NodeTruth;
let head: number;
const tmp = useTempDir('sandbox-rpc-e2e-');
const sentByHash = new Map<string, Sent>();

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Runs job `name` (its targets, range, decode) on the sandbox's one chain, the job file in
 * tmp.dir/job-<name> and the export in tmp.dir/<name>.
 */
async function exportFromSandbox(
  name: string,
  format: 'parquet' | 'ndjson',
  job: Record<string, unknown>,
): Promise<{ out: string; report: RunReport }> {
  const out = join(tmp.dir, name);
  const report = await exportJob({
    dir: join(tmp.dir, `job-${name}`),
    destination: out,
    flags: { format },
    job: { name, source: { base_url: sandbox.url, chains: [CHAIN] }, ...job },
  });
  return { out, report };
}

beforeAll(async () => {
  act = new ChainActivity(anvil, 11);
  await act.init();
  await act.deploy();
  for (let b = 2; b <= 6; b++) await act.block(b);
  sandbox = await startRpcSandbox({
    rpc: anvil.url,
    abis: [`${act.erc20}=${ERC20_ARTIFACT}`, `${act.erc721}=${ERC721_ARTIFACT}`],
    pollMs: 50,
  });
  // The chain goes on while the sandbox runs: it has to follow by polling (no sync() here).
  for (let b = 7; b <= 15; b++) await act.block(b);
  await act.setCode();
  head = Number(await anvil.rpc<string>('eth_blockNumber'));
  await waitFor(`the sandbox to reach block ${head}`, () => sandbox.data.chains[0]!.headBlock === head);
  truth = new NodeTruth(anvil.url);
  expect(await truth.load()).toBe(head);
  for (const s of act.sent) sentByHash.set(s.hash, s);
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('sandbox --rpc over anvil', () => {
  it('sent more than 500 transfers from several accounts, all mined as intended', () => {
    const transfers = act.sent.filter((s) => s.kind === 'erc20-transfer' || s.kind === 'erc721-transfer' || s.kind === 'erc721-mint');
    expect(transfers.length).toBeGreaterThan(500);
    expect(new Set(transfers.map((s) => s.from)).size).toBeGreaterThanOrEqual(5);
    for (const s of act.sent) {
      const r = truth.receipts.get(s.hash);
      expect(r, `receipt of ${s.kind} ${s.hash}`).toBeDefined();
      expect(r!.status, `${s.kind} ${s.from} -> ${s.to} ${s.amount ?? s.tokenId} in block ${r!.blockNumber}`).toBe(
        s.ok ? 'success' : 'reverted',
      );
    }
    expect(act.sent.some((s) => !s.ok)).toBe(true);
  });

  it('serves every block the node has, field by field (resolve/<number>)', async () => {
    expect(sandbox.data.chains[0]).toMatchObject({
      chainId: CHAIN,
      firstBlock: 0,
      headBlock: head,
      transactionCount: truth.transactions().length,
    });
    for (let n = 0; n <= head; n++) {
      const res = await fetch(`${sandbox.url}/resolve/${n}?chain_id=${CHAIN}`);
      const body = (await res.json()) as { data: { type: string; blocks: unknown[] } };
      expect(body.data.type).toBe('block');
      expect(body.data.blocks).toEqual([expectedBlockRecord(truth.block(n), CHAIN)]);
    }
  });

  it('exports wallet transactions that equal the node’s transactions and receipts, decoded as sent', async () => {
    const wallets = [act.accounts[0]!, act.accounts[1]!, act.accounts[4]!, act.accounts[9]!];
    const { out, report } = await exportFromSandbox('anvil-wallets', 'parquet', {
      targets: wallets.map((w) => ({ wallet: w, datasets: ['transactions'] })),
      // Up to the head itself: a fixed `to` past head minus the default lag would be clamped.
      range: { from: 0, to: 'latest', safety_lag: 0, chunk: 4 },
      decode: true,
    });
    expect(report.status).toBe('succeeded');
    const rows = await readTable(out, 'transactions', 'parquet');
    let compared = 0;
    let decodedChecked = 0;
    for (const w of wallets) {
      const mine = rows.filter((r) => r.wallet_address === w);
      const node = truth.walletTransactions(w);
      expect(node.length).toBeGreaterThan(10);
      // Exactly the node's transactions of the wallet, each once.
      expect(mine.map((r) => r.hash).sort()).toEqual(node.map((t) => t.hash).sort());
      const byHash = new Map(mine.map((r) => [r.hash as string, r]));
      for (const t of node) {
        const row = byHash.get(t.hash)!;
        const expected = expectedTransactionRow(t, truth.receipts.get(t.hash)!, truth.block(t.blockNumber!), w, CHAIN);
        expect(Object.keys(row).sort()).toEqual([...Object.keys(expected), ...DECODE_COLUMNS].sort());
        const base: CanonRow = Object.fromEntries(Object.keys(expected).map((k) => [k, row[k]!]));
        expect(base, `transaction ${t.hash}`).toEqual(expected);
        compared++;
        const sent = sentByHash.get(t.hash);
        if (sent?.call) {
          expect(row.decode_status).toBe('ok');
          expect(row.decoded_function_name).toBe(sent.call.name);
          expect(JSON.parse(row.decoded_inputs_json as string)).toEqual(sent.call.inputs);
          decodedChecked++;
        } else {
          expect(row.decoded_function_name).toBeNull();
        }
      }
    }
    expect(compared).toBe(rows.length);
    expect(decodedChecked).toBeGreaterThan(100);
    // The kinds of transaction the node had all came through: legacy, access list, EIP-1559, EIP-7702, creations, reverts.
    expect(new Set(rows.map((r) => r.transaction_type))).toEqual(new Set(['0', '1', '2', '4']));
    expect(rows.some((r) => r.contract_address === act.erc20)).toBe(true);
    expect(rows.some((r) => r.status === '0')).toBe(true);
  });

  it('an incremental job (to: latest) finds the chain head through resolve and stops safety_lag blocks below it', async () => {
    const wallet = act.accounts[3]!;
    const { out, report } = await exportFromSandbox('anvil-latest', 'ndjson', {
      targets: [{ wallet, datasets: ['transactions'] }],
      range: { from: 0, to: 'latest', safety_lag: 3, chunk: 4 },
    });
    expect(report.status).toBe('succeeded');
    const rows = await readTable(out, 'transactions', 'ndjson');
    const expected = truth.walletTransactions(wallet).filter((t) => Number(t.blockNumber) <= head - 3);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(truth.walletTransactions(wallet).length);
    expect(rows.map((r) => r.hash).sort()).toEqual(expected.map((t) => t.hash).sort());
  });

  const eventCases = [
    { name: 'ERC-20', signature: ERC20_TRANSFER, token: 'erc20' as const, argColumn: 'arg_value', contract: () => act.erc20 },
    { name: 'ERC-721', signature: ERC721_TRANSFER, token: 'erc721' as const, argColumn: 'arg_token_id', contract: () => act.erc721 },
  ];
  for (const c of eventCases) {
    it(`exports ${c.name} Transfer events that equal eth_getLogs, decoded as sent`, async () => {
      const { out, report } = await exportFromSandbox(`anvil-${c.token}-transfers`, 'parquet', {
        targets: [{ contract: c.contract(), events: [c.signature] }],
        range: { from: 0, to: 'latest', safety_lag: 0, chunk: 4 },
        decode: true,
      });
      expect(report.status).toBe('succeeded');
      const rows = await readTable(out, eventTableForSignature(c.signature), 'parquet');
      const logs = await truth.client.getLogs({
        address: c.contract() as `0x${string}`,
        event: parseAbiItem(`event ${c.signature}`) as AbiEvent,
        fromBlock: 0n,
        toBlock: BigInt(head),
        strict: true,
      });
      const expectedLogs = act.sent
        .filter((s) => s.ok)
        .flatMap((s) => s.transfers.filter((t) => t.token === c.token).map((t) => ({ s, t })));
      expect(logs.length).toBe(expectedLogs.length);
      expect(rows.map((r) => r.item_id).sort()).toEqual(logs.map((l) => `${CHAIN}:${l.transactionHash}:${l.logIndex}`).sort());
      const byId = new Map(rows.map((r) => [r.item_id as string, r]));
      for (const l of logs) {
        const row = byId.get(`${CHAIN}:${l.transactionHash}:${l.logIndex}`)!;
        const expected = expectedEventRow(l, truth.block(l.blockNumber), CHAIN, 'Transfer(address,address,uint256)');
        const sent = sentByHash.get(l.transactionHash)!;
        const transfer = sent.transfers.find((t) => t.token === c.token)!;
        expect(row).toEqual({
          ...expected,
          arg_from: transfer.from,
          arg_to: transfer.to,
          [c.argColumn]: transfer.amountOrId.toString(),
          decode_status: 'ok',
        });
      }
    });
  }

  it('derives NFT holdings from the Transfer logs: every token where ownerOf says', async () => {
    const abi = parseAbi(['function ownerOf(uint256 tokenId) view returns (address)', 'function totalSupply() view returns (uint256)']);
    const erc721 = act.erc721 as `0x${string}`;
    const supply = await truth.client.readContract({ address: erc721, abi, functionName: 'totalSupply' });
    expect(supply).toBeGreaterThan(20n);
    const expected = new Map<string, string[]>();
    for (let id = 0n; id < supply; id++) {
      const owner = (await truth.client.readContract({ address: erc721, abi, functionName: 'ownerOf', args: [id] })).toLowerCase();
      expected.set(owner, [...(expected.get(owner) ?? []), id.toString()]);
    }
    for (const account of act.accounts) {
      const res = await fetch(`${sandbox.explorerUrl}/addresses/${account}/nft/collections?chain_id=${CHAIN}&type=ERC-721`);
      const body = (await res.json()) as {
        items: { token: { address: string; symbol: string; name: string }; token_instances: { id: string }[] }[];
      };
      const ids = body.items.flatMap((c) => c.token_instances.map((t) => t.id)).sort();
      expect(ids, `NFTs of ${account}`).toEqual((expected.get(account) ?? []).sort());
      for (const c of body.items) expect(c.token).toMatchObject({ address: act.erc721, name: 'Anvil Apes', symbol: 'AAPE' });
    }
  });

  it('answers group_by/aggregate over the node rows like a recomputation from the node', async () => {
    const wallet = act.accounts[2]!;
    const q = `chain_id=${CHAIN}&group_by=block_number&aggregate=${encodeURIComponent('count() as n')}&aggregate=${encodeURIComponent('sum(gas_used) as gas')}&limit=1000`;
    const body = (await (await fetch(`${sandbox.url}/wallets/${wallet}/transactions?${q}`)).json()) as {
      aggregations: { block_number: number; n: number; gas: number }[];
    };
    const expected = new Map<number, { n: number; gas: number }>();
    for (const t of truth.walletTransactions(wallet)) {
      const e = expected.get(Number(t.blockNumber)) ?? { n: 0, gas: 0 };
      e.n++;
      e.gas += Number(truth.receipts.get(t.hash)!.gasUsed);
      expected.set(Number(t.blockNumber), e);
    }
    expect(body.aggregations).toEqual(
      [...expected.entries()].sort((a, b) => a[0] - b[0]).map(([block_number, e]) => ({ block_number, ...e })),
    );
  });

  it('decodes posted calldata and logs with the ABI file given for the contract', async () => {
    const sent = act.sent.find((s) => s.kind === 'erc20-transfer' && s.ok)!;
    const tx = truth.transactions().find((t) => t.hash === sent.hash)!;
    const log = truth.receipts.get(sent.hash)!.logs[0]!;
    const res = await fetch(`${sandbox.url}/decode/${act.erc20}?chain_id=${CHAIN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transactions: [{ data: tx.input }], logs: [{ topics: log.topics, data: log.data }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      data: { transactions: { function_name: string; args: unknown[] }[]; logs: { event_name: string; args: unknown[] }[] };
    };
    expect(body.data.transactions[0]).toMatchObject({ function_name: 'transfer', args: [sent.to, sent.amount!.toString()] });
    expect(body.data.logs[0]).toMatchObject({ event_name: 'Transfer', args: [sent.from, sent.to, sent.amount!.toString()] });
    // An address with no ABI (a plain account): 404 like the real service.
    const none = await fetch(`${sandbox.url}/decode/${act.accounts[5]}`, { method: 'POST', body: '{}' });
    expect(none.status).toBe(404);
  });
});
