/**
 * What a window's rows are checked against before it commits (src/run/window-proof.ts), against
 * the sandbox: its edge block must be served (a window with rows never commits without one), its
 * rows no later than that edge (a block time in milliseconds is refused) and, at a block the run
 * resolved, of that block's hash; a window exported again asks with another limit than a first
 * export, keyed by its edge's hash.
 */
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/datasets/index.js';
import { EdgeNotServedError, BlockLookup } from '../../src/source/block-by-number.js';
import { InsightClient } from '../../src/source/client.js';
import type { TransactionRecord } from '../../src/source/records.js';
import { edgeToCommit, pagingLimit, rowCheck, windowEdges, type WindowEdges } from '../../src/run/window-proof.js';
import type { ExportWindow } from '../../src/run/export-windows.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const CHAIN = 1;

function unit(start: number, end: number, again = false): ExportWindow {
  return {
    dataset: DATASETS.transactions,
    target: { wallet: sandbox.data.wallets[0]!.address },
    chainId: CHAIN,
    axis: 'block',
    start,
    end,
    unitKey: `transactions/x/${CHAIN}/block`,
    filters: {},
    ...(again ? { again } : {}),
  };
}

const blocks = () => new BlockLookup(new InsightClient({ baseUrl: sandbox.url, backoff: { baseMs: 1, maxMs: 2 } }));

describe('a window commits only with its edge, and rows its edge allows', () => {
  it('a window with rows and no edge block served is not committed; one without rows commits without an edge', () => {
    const u = unit(100, 200);
    const edges: WindowEdges = new Map([[CHAIN, null]]);
    expect(() => edgeToCommit(u, edges, 3, undefined)).toThrow(EdgeNotServedError);
    expect(() => edgeToCommit(u, edges, 3, undefined)).toThrow(/no block 199 on chain 1/);
    expect(edgeToCommit(u, edges, 0, undefined)).toBeUndefined();
  });

  it('rows after the edge block (a block time in milliseconds) and rows at a resolved block with another hash are refused', async () => {
    const chain = sandbox.data.chain(CHAIN)!;
    const lookup = blocks();
    const u = unit(chain.firstBlock, chain.firstBlock + 500);
    const edges = await windowEdges([u], lookup);
    const edge = edges.get(CHAIN)!;
    expect(edge.block_number).toBe(chain.firstBlock + 499);
    const check = rowCheck([u], edges, lookup);
    const row = { chain_id: CHAIN, block_number: edge.block_number, block_timestamp: edge.block_timestamp, block_hash: edge.block_hash };
    const asRecord = (r: Partial<TransactionRecord>) => r as unknown as TransactionRecord;
    expect(check(asRecord(row))).toBeNull();
    expect(check(asRecord({ ...row, block_timestamp: edge.block_timestamp * 1000 }))).toBe('implausible');
    expect(check(asRecord({ ...row, block_hash: `0x${'ab'.repeat(32)}` }))).toBe('block_hash');
    // At a block the run did not resolve, the hash cannot be checked.
    expect(check(asRecord({ ...row, block_number: edge.block_number - 1, block_hash: `0x${'ab'.repeat(32)}` }))).toBeNull();
  });

  it('a window exported again asks with a limit below a first export, keyed by its edge; its edge is confirmed by its hash', async () => {
    const chain = sandbox.data.chain(CHAIN)!;
    const lookup = blocks();
    const first = unit(chain.firstBlock, chain.firstBlock + 500);
    const again = unit(chain.firstBlock, chain.firstBlock + 500, true);
    const edges = await windowEdges([again], lookup);
    expect(pagingLimit(1000, [first], edges)).toBe(1000);
    const limit = pagingLimit(1000, [again], edges);
    expect(limit).toBeLessThanOrEqual(992);
    expect(limit).toBeGreaterThan(984);
    // Another branch's edge: another limit (one in eight the same).
    const other: WindowEdges = new Map([[CHAIN, { ...edges.get(CHAIN)!, block_hash: `0x${'cd'.repeat(31)}0001` }]]);
    const limits = new Set([limit, pagingLimit(1000, [again], other)]);
    expect(limits.size).toBe(2);
  });
});
