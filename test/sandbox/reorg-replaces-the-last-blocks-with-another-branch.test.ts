/**
 * `POST /_sandbox/reorg?chain_id=&depth=` replaces the last `depth` blocks of a chain with another
 * branch: every block from there on gets a new hash (parent hashes chain on), blocks below keep
 * theirs, some transactions are dropped, some replaced by new ones, some moved to the next block;
 * the list routes, resolve and the ground truth all answer the new branch; other chains are
 * untouched. Bad requests get a 400.
 */
import { expect, it } from 'vitest';
import type { BlockRecord, TransactionRecord } from '../../src/source/records.js';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 20_000 });
const CHAIN = 8453;

async function block(n: number, chainId = CHAIN): Promise<BlockRecord> {
  const r = await getJson(`${sandbox.url}/resolve/${n}?chain_id=${chainId}`);
  return (r.body.data.blocks as BlockRecord[]).find((b) => b.chain_id === chainId)!;
}

async function allTransactions(wallet: string, from: number): Promise<TransactionRecord[]> {
  const rows: TransactionRecord[] = [];
  for (let page = 0; ; page++) {
    const r = await getJson(
      `${sandbox.url}/wallets/${wallet}/transactions?chain_id=${CHAIN}&filter_block_number_gte=${from}&limit=1000&page=${page}&sort_by=block_number&sort_order=asc`,
    );
    expect(r.status).toBe(200);
    rows.push(...(r.body.data as TransactionRecord[]));
    if (r.body.data.length < 1000) return rows;
  }
}

it('replaces the last blocks with a new branch that every route answers', async () => {
  const info = sandbox.data.chain(CHAIN)!;
  const depth = 2000;
  const from = info.headBlock - depth + 1;
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const below = await block(from - 1);
  const oldFrom = await block(from);
  const oldHead = await block(info.headBlock);
  const otherChainHead = await block(sandbox.data.chain(1)!.headBlock, 1);
  const oldRows = await allTransactions(alice, from);
  const oldTruth = [...sandbox.data.transactions(CHAIN)].filter((t) => t.block_number >= from);

  const res = await fetch(`${sandbox.url.replace(/\/insights\/v1$/, '')}/_sandbox/reorg?chain_id=${CHAIN}&depth=${depth}`, {
    method: 'POST',
  });
  expect(res.status).toBe(200);
  const summary = (await res.json()) as { from_block: number; head_block: number; dropped: number; replaced: number; moved: number };
  expect(summary.from_block).toBe(from);
  expect(summary.head_block).toBe(info.headBlock);
  expect(summary.dropped).toBeGreaterThan(0);
  expect(summary.replaced).toBeGreaterThan(0);
  expect(summary.moved).toBeGreaterThan(0);

  // Hashes: unchanged below the branch, new from its first block on, parents chained.
  expect(await block(from - 1)).toEqual(below);
  const newFrom = await block(from);
  expect(newFrom.block_hash).not.toBe(oldFrom.block_hash);
  expect(newFrom.parent_hash).toBe(below.block_hash);
  const newHead = await block(info.headBlock);
  expect(newHead.block_hash).not.toBe(oldHead.block_hash);
  expect((await block(info.headBlock - 1)).block_hash).toBe(newHead.parent_hash);
  expect(newHead.block_timestamp).toBe(oldHead.block_timestamp);
  expect(await block(sandbox.data.chain(1)!.headBlock, 1)).toEqual(otherChainHead);
  // A block hash of the new branch resolves; one of the old branch no longer does.
  const byHash = await getJson(`${sandbox.url}/resolve/${newHead.block_hash}?chain_id=${CHAIN}`);
  expect(byHash.body.data.blocks[0].block_number).toBe(info.headBlock);
  const oldByHash = await getJson(`${sandbox.url}/resolve/${oldHead.block_hash}?chain_id=${CHAIN}`);
  expect(oldByHash.body.data.blocks ?? []).toEqual([]);

  // Rows: the list route equals the ground truth of the new branch, every row with its block's new hash.
  const newRows = await allTransactions(alice, from);
  const truth = sandbox.data.allWalletTransactions(
    alice,
    sandbox.data.parseTransactionsQuery(`chain_id=${CHAIN}&filter_block_number_gte=${from}`),
  );
  expect(newRows.map((t) => t.hash)).toEqual(truth.map((t) => t.hash));
  const hashes = new Map<number, string>();
  for (const t of newRows) {
    if (!hashes.has(t.block_number)) hashes.set(t.block_number, (await block(t.block_number)).block_hash);
    expect(t.block_hash).toBe(hashes.get(t.block_number));
  }
  const oldIds = new Set(oldRows.map((t) => t.hash));
  const newIds = new Set(newRows.map((t) => t.hash));
  expect([...oldIds].some((h) => !newIds.has(h))).toBe(true);
  expect([...newIds].some((h) => !oldIds.has(h))).toBe(true);
  // Moved: same transaction, a later block, first in it.
  const newTruth = [...sandbox.data.transactions(CHAIN)].filter((t) => t.block_number >= from);
  const oldByHashMap = new Map(oldTruth.map((t) => [t.hash, t]));
  const moved = newTruth.filter((t) => oldByHashMap.has(t.hash) && oldByHashMap.get(t.hash)!.block_number !== t.block_number);
  expect(moved.length).toBe(summary.moved);
  for (const t of moved) {
    expect(t.block_number).toBe(oldByHashMap.get(t.hash)!.block_number + 1);
    expect(t.transaction_index).toBe(0);
  }
  // Within a block, transaction indexes stay 0, 1, 2 ... in order.
  const byBlock = new Map<number, number[]>();
  for (const t of [...sandbox.data.transactions(CHAIN)].filter((x) => x.block_number >= from))
    (byBlock.get(t.block_number) ?? byBlock.set(t.block_number, []).get(t.block_number)!).push(t.transaction_index);
  for (const [, idx] of byBlock) expect(idx).toEqual([...idx].sort((a, b) => a - b));
  expect(newTruth.length).toBe(oldTruth.length - summary.dropped);
});

it('refuses a depth or chain it cannot reorganise', async () => {
  const root = sandbox.url.replace(/\/insights\/v1$/, '');
  const tooDeep = await fetch(`${root}/_sandbox/reorg?chain_id=${CHAIN}&depth=0`, { method: 'POST' });
  expect(tooDeep.status).toBe(400);
  expect(((await tooDeep.json()) as { error: string }).error).toMatch(/depth must be a number of blocks from 1 to/);
  const noChain = await fetch(`${root}/_sandbox/reorg?chain_id=999&depth=5`, { method: 'POST' });
  expect(noChain.status).toBe(400);
  expect(((await noChain.json()) as { error: string }).error).toMatch(/no chain 999/);
});
