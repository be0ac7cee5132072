import { describe, expect, it } from 'vitest';
import { pageWindow } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';
import { RunRequestPool } from '../../src/run/request-pool.js';
import { blockWindowOptions, makeRows, type Rec } from './paginator-fixtures.js';

/** Blocks 1000-1199 hold 3 rows each, except DENSE_FROM..DENSE_TO-1, which hold 60. */
const DENSE_FROM = 1100;
const DENSE_TO = 1103;
const rows = makeRows(1, 200, (b) => (1000 + b >= DENSE_FROM && 1000 + b < DENSE_TO ? 60 : 3));

const bound = (f: Filters, name: string, fallback: number) => (f[name] === undefined ? fallback : Number(f[name]));

/**
 * The list endpoint's semantics, answering every request after 5 ms; counts how many requests
 * for the dense blocks are open at once.
 */
function service() {
  let denseOpen = 0;
  const stats = { requests: 0, maxDenseOpen: 0 };
  const fetch = async (chains: number[], filters: Filters, _page: number, limit: number): Promise<Rec[]> => {
    stats.requests++;
    const blockLo = bound(filters, 'filter_block_number_gte', 0);
    const blockHi = bound(filters, 'filter_block_number_lt', Infinity);
    const indexLo = bound(filters, 'filter_transaction_index_gte', 0);
    const indexHi = bound(filters, 'filter_transaction_index_lt', Infinity);
    const dense = blockLo >= DENSE_FROM && blockHi <= DENSE_TO;
    if (dense) stats.maxDenseOpen = Math.max(stats.maxDenseOpen, ++denseOpen);
    await new Promise((r) => setTimeout(r, 5));
    if (dense) denseOpen--;
    return rows
      .filter((r) => chains.includes(r.chain) && r.block >= blockLo && r.block < blockHi && r.index >= indexLo && r.index < indexHi)
      .slice(0, limit);
  };
  return { fetch, stats };
}

describe('a window whose slice comes back full while it holds later pages', () => {
  it('pages the cut pieces concurrently: answered pages waiting for their turn hold no request slot', async () => {
    const src = service();
    const pool = new RunRequestPool(4);
    pool.windows = 1;
    const got: Rec[] = [];
    // The density of the earlier windows says 3 rows per block: pieces of ~2 blocks, sent
    // ahead; the piece over the dense blocks comes back full and is cut into pieces of ~7 rows.
    const options = blockWindowOptions(src.fetch, {
      chainIds: [1],
      start: 1000,
      end: 1200,
      limit: 10,
      prefetch: Number.POSITIVE_INFINITY,
      pool,
      density: new Map([[1, 3]]),
    });
    for await (const batch of pageWindow(options)) {
      if (!('done' in batch)) got.push(...batch.records);
      // The window's consumer writes its rows: slower than the service answers.
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(got.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    // 180 dense rows in pieces of ~7: they are asked several at a time, not one round trip each.
    expect(src.stats.maxDenseOpen).toBeGreaterThanOrEqual(3);
    expect(pool.counts).toEqual({ inFlight: 0, outstanding: 0 });
  });
});
