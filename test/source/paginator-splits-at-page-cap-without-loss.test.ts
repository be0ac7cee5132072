import { describe, expect, it } from 'vitest';
import { pageWindow, WindowTooDenseError, type PagedBatch } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';
import { blockWindowOptions, type Rec } from './paginator-fixtures.js';

/**
 * A fake list endpoint with the contract's semantics: rows per chain sorted by block, the window
 * filters, `limit` per chain, pages past maxPage refused.
 */
function fakeSource(rows: Rec[], maxPage: number, opts: { duplicateEvery?: number } = {}) {
  const requests: { chains: number[]; filters: Filters; page: number }[] = [];
  const fetch = async (chains: number[], filters: Filters, page: number, limit: number): Promise<Rec[]> => {
    requests.push({ chains, filters, page });
    if (page > maxPage) throw new Error(`page ${page} past the cap`);
    const gte = Number(filters.filter_block_number_gte);
    const lt = Number(filters.filter_block_number_lt);
    const out: Rec[] = [];
    for (const chain of chains) {
      let matching = rows.filter((r) => r.chain === chain && r.block >= gte && r.block < lt);
      if (opts.duplicateEvery) {
        // The real service's UNION ALL: some rows come back twice, adjacent.
        matching = matching.flatMap((r, i) => (i % opts.duplicateEvery! === 0 ? [r, r] : [r]));
      }
      out.push(...matching.slice(page * limit, (page + 1) * limit));
    }
    return out;
  };
  return { requests, fetch };
}

function makeRows(chain: number, blocks: number, perBlock: (b: number) => number): Rec[] {
  const rows: Rec[] = [];
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < perBlock(b); i++) rows.push({ chain, block: 1000 + b, id: `${chain}:${1000 + b}:${i}` });
  }
  return rows;
}

async function collect(gen: AsyncGenerator<PagedBatch<Rec> | { chainId: number; done: true }>) {
  const rows: Rec[] = [];
  const done: number[] = [];
  for await (const b of gen) {
    if ('done' in b) done.push(b.chainId);
    else rows.push(...b.records);
  }
  return { rows, done };
}

function options(src: ReturnType<typeof fakeSource>, chainIds: number[], limit: number, maxPage: number, start = 1000, end = 10_000) {
  return blockWindowOptions(src.fetch, { chainIds, start, end, limit, maxPage, prefetch: 2 });
}

describe('pageWindow', () => {
  it('returns every row of a window that needs far more pages than the cap, each once, in order', async () => {
    // 3 pages allowed (0..2) of 10 rows; 37 blocks with 1..7 rows each: ~150 rows, many splits.
    const rows = makeRows(1, 37, (b) => 1 + (b % 7));
    const src = fakeSource(rows, 2);
    const { rows: got, done } = await collect(pageWindow(options(src, [1], 10, 2)));
    expect(got.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(done).toEqual([1]);
    expect(src.requests.every((r) => r.page <= 2)).toBe(true);
    // The window was split: later sequences start at a moved cursor.
    const lowers = new Set(src.requests.map((r) => r.filters.filter_block_number_gte));
    expect(lowers.size).toBeGreaterThan(3);
  });

  it('drops duplicates the service sends (a self-transfer twice) without ending early', async () => {
    const rows = makeRows(1, 50, () => 3);
    const src = fakeSource(rows, 4, { duplicateEvery: 4 });
    const { rows: got } = await collect(pageWindow(options(src, [1], 7, 4)));
    expect(got.map((r) => r.id)).toEqual(rows.map((r) => r.id));
  });

  it('pages several chains in shared requests and finishes each chain on its own', async () => {
    const rows = [...makeRows(1, 30, () => 2), ...makeRows(8453, 5, () => 1), ...makeRows(42161, 80, () => 3)];
    const src = fakeSource(rows, 3);
    const { rows: got, done } = await collect(pageWindow(options(src, [1, 8453, 42161], 10, 3)));
    for (const chain of [1, 8453, 42161]) {
      expect(got.filter((r) => r.chain === chain).map((r) => r.id)).toEqual(rows.filter((r) => r.chain === chain).map((r) => r.id));
    }
    expect(done.sort()).toEqual([1, 8453, 42161].sort());
    // The first request asked for all three chains at once.
    expect(src.requests[0]!.chains).toEqual([1, 8453, 42161]);
  });

  it('respects the window bounds (half-open) and the base filters', async () => {
    const rows = makeRows(1, 20, () => 2);
    const src = fakeSource(rows, 20);
    const opts = { ...options(src, [1], 5, 20, 1005, 1010), baseFilters: { filter_value_gte: '7' } };
    const { rows: got } = await collect(pageWindow(opts));
    expect(got.map((r) => r.block)).toEqual([1005, 1005, 1006, 1006, 1007, 1007, 1008, 1008, 1009, 1009]);
    expect(src.requests.every((r) => r.filters.filter_value_gte === '7')).toBe(true);
  });

  it('fails with a typed error when one cursor value holds more rows than the cap allows', async () => {
    const rows = makeRows(1, 3, (b) => (b === 1 ? 40 : 2));
    const src = fakeSource(rows, 2);
    await expect(collect(pageWindow(options(src, [1], 5, 2)))).rejects.toBeInstanceOf(WindowTooDenseError);
  });

  it('reports an empty window as done with no rows and one request', async () => {
    const src = fakeSource([], 20);
    const { rows, done } = await collect(pageWindow(options(src, [1, 2], 10, 20)));
    expect(rows).toEqual([]);
    expect(done.sort()).toEqual([1, 2]);
    expect(src.requests).toHaveLength(1);
  });
});
