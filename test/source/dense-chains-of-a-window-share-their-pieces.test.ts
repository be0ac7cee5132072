import { describe, expect, it } from 'vitest';
import { newPagingStats, pageWindow } from '../../src/source/paginator.js';
import { blockWindowOptions, collect, fakeService, makeRows, type Rec } from './paginator-fixtures.js';

const ids = (rows: Rec[]) => rows.map((r) => r.id);
const inBlockOrder = (rows: Rec[]) => [...rows].sort((a, b) => a.block - b.block || a.index - b.index);

describe('the dense chains of a window share their pieces', () => {
  it('asks about as many requests as the densest chain needs alone, each naming every dense chain', async () => {
    // 800, 600 and 400 rows over 200 blocks; limit 100, so 70 rows aimed at per piece.
    const truth = [...makeRows(1, 200, () => 4), ...makeRows(2, 200, () => 3), ...makeRows(3, 200, () => 2)];
    const src = fakeService(truth);
    const stats = newPagingStats();
    const density = new Map([
      [1, 4],
      [2, 3],
      [3, 2],
    ]);
    const { rows, done } = await collect(
      pageWindow({
        ...blockWindowOptions(src.fetch, { chainIds: [1, 2, 3], start: 1000, end: 1200, limit: 100, prefetch: 4, density }),
        stats,
      }),
    );
    for (const chain of [1, 2, 3]) {
      const got = rows.filter((r) => r.chain === chain);
      expect(ids(got)).toEqual(ids(inBlockOrder(truth.filter((r) => r.chain === chain))));
    }
    expect(done.sort()).toEqual([1, 2, 3]);
    expect(stats.splits).toBe(0);
    // Alone they would take ⌈800/70⌉ + ⌈600/70⌉ + ⌈400/70⌉ = 27.
    expect(stats.requests).toBeLessThanOrEqual(Math.ceil(800 / 70) + 1);
    expect(src.requests.every((r) => r.chains.length === 3)).toBe(true);
  });

  it('cuts alone the piece that comes back full for one chain, and takes the others’ rows of that piece', async () => {
    // Chain 2 holds 120 rows in block 1100: the shared piece around it is full for chain 2 only.
    const truth = [...makeRows(1, 200, () => 2), ...makeRows(2, 200, (b) => (b === 100 ? 120 : 2)), ...makeRows(3, 200, () => 1)];
    const src = fakeService(truth);
    const density = new Map([
      [1, 2],
      [2, 2],
      [3, 1],
    ]);
    const { rows, done } = await collect(
      pageWindow(blockWindowOptions(src.fetch, { chainIds: [1, 2, 3], start: 1000, end: 1200, limit: 100, prefetch: 4, density })),
    );
    for (const chain of [1, 2, 3]) {
      const got = rows.filter((r) => r.chain === chain);
      expect(ids(got)).toEqual(ids(inBlockOrder(truth.filter((r) => r.chain === chain))));
    }
    expect(done.sort()).toEqual([1, 2, 3]);
    const alone = src.requests.filter((r) => r.chains.length === 1);
    expect(alone.length).toBeGreaterThan(0);
    expect(alone.every((r) => r.chains[0] === 2)).toBe(true);
    // Block 1100 alone is cut on the transaction index.
    expect(alone.some((r) => r.filters.filter_transaction_index_gte !== undefined)).toBe(true);
  });
});
