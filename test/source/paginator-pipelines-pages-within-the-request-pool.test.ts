import { describe, expect, it } from 'vitest';
import { pageWindow, type RecordPage, type RequestPool } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';
import { blockWindowOptions, makeRows as makeRowsBy, type Rec } from './paginator-fixtures.js';

function makeRows(chain: number, blocks: number, perBlock: number, first = 1000): Rec[] {
  return makeRowsBy(chain, blocks, () => perBlock, first);
}

/** The list endpoint's semantics (window filters, limit per chain), answering the n-th request after `delay(n)` ms; counts concurrency. */
function slowSource(rows: Rec[], delay: (n: number) => number, failAt?: number) {
  let open = 0;
  const stats = { requests: 0, maxOpen: 0 };
  const fetch = async (chains: number[], filters: Filters, page: number, limit: number): Promise<Rec[]> => {
    const n = stats.requests++;
    open++;
    stats.maxOpen = Math.max(stats.maxOpen, open);
    await new Promise((r) => setTimeout(r, delay(n)));
    open--;
    if (n === failAt) throw new Error('boom');
    const gte = Number(filters.filter_block_number_gte);
    const lt = Number(filters.filter_block_number_lt);
    const out: Rec[] = [];
    for (const chain of chains)
      out.push(...rows.filter((r) => r.chain === chain && r.block >= gte && r.block < lt).slice(page * limit, (page + 1) * limit));
    return out;
  };
  return { stats, fetch };
}

/** A pool like the run's: speculative pages while fewer than `room` are outstanding. */
function countingPool(room: number) {
  const state = { outstanding: 0, maxOutstanding: 0 };
  const pool: RequestPool = {
    tryTake: () => {
      if (state.outstanding >= room) return false;
      state.outstanding++;
      state.maxOutstanding = Math.max(state.maxOutstanding, state.outstanding);
      return true;
    },
    take: () => {
      state.outstanding++;
      state.maxOutstanding = Math.max(state.maxOutstanding, state.outstanding);
    },
    answered: () => undefined,
    give: () => void state.outstanding--,
  };
  return { pool, state };
}

function options(src: ReturnType<typeof slowSource>, pool: RequestPool | undefined, limit: number, maxPage: number, end: number) {
  return blockWindowOptions(src.fetch, {
    chainIds: [1],
    start: 1000,
    end,
    limit,
    maxPage,
    prefetch: Number.POSITIVE_INFINITY,
    ...(pool ? { pool } : {}),
  });
}

async function collect(gen: AsyncGenerator<RecordPage<Rec> | { chainId: number; done: true }>): Promise<Rec[]> {
  const rows: Rec[] = [];
  for await (const b of gen) if (!('done' in b)) rows.push(...b.records);
  return rows;
}

describe('pageWindow with a request pool', () => {
  it('keeps several requests of one window in flight, never more than the pool allows, and returns every row in order', async () => {
    // 600 rows, limit 10: about 90 slices of 7 rows.
    const rows = makeRows(1, 200, 3);
    const src = slowSource(rows, (page) => 3 + ((page * 7) % 5)); // answers out of order
    const { pool, state } = countingPool(6);
    const got = await collect(pageWindow(options(src, pool, 10, 5, 1200)));
    expect(got.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(src.stats.maxOpen).toBeGreaterThanOrEqual(4);
    // Speculative pages stop at the pool's room; one needed page may come on top.
    expect(state.maxOutstanding).toBeLessThanOrEqual(6 + 1);
    expect(state.outstanding).toBe(0);
  });

  it('never asks past the end of a window: about rows / target requests when rows are evenly spread', async () => {
    const rows = makeRows(1, 500, 1); // 500 rows: 72 slices of 7 rows (0.7 of the limit), one full first answer
    const src = slowSource(rows, () => 1);
    const { pool, state } = countingPool(16);
    const got = await collect(pageWindow(options(src, pool, 10, 1000, 1500)));
    expect(got).toHaveLength(500);
    expect(src.stats.requests).toBeLessThanOrEqual(Math.ceil(500 / 7) + 2);
    expect(state.outstanding).toBe(0);
  });

  it('gives every slot back when a page fails or the consumer stops early', async () => {
    const rows = makeRows(1, 100, 5);
    const failing = slowSource(rows, () => 2, 7);
    const a = countingPool(8);
    await expect(collect(pageWindow(options(failing, a.pool, 10, 1000, 1100)))).rejects.toThrow('boom');
    expect(a.state.outstanding).toBe(0);

    const b = countingPool(8);
    const gen = pageWindow(
      options(
        slowSource(rows, () => 2),
        b.pool,
        10,
        1000,
        1100,
      ),
    );
    for await (const batch of gen) if (!('done' in batch)) break;
    expect(b.state.outstanding).toBe(0);
  });

  it('without a pool pipelines at most `prefetch` pages ahead', async () => {
    const rows = makeRows(1, 100, 5);
    const src = slowSource(rows, () => 2);
    const got = await collect(pageWindow({ ...options(src, undefined, 10, 1000, 1100), prefetch: 2 }));
    expect(got).toHaveLength(500);
    expect(src.stats.maxOpen).toBeLessThanOrEqual(2);
  });
});
