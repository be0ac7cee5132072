import { describe, expect, it } from 'vitest';
import { pageWindow, newPagingStats, SliceTooDenseError } from '../../src/source/paginator.js';
import { blockWindowOptions, collect, fakeService, makeRows, type Misbehaviour, type Rec } from './paginator-fixtures.js';

const ids = (rows: Rec[]) => rows.map((r) => r.id);
/** Rows in the order they must be written: by chain, block, index. */
const ordered = (rows: Rec[]) => [...rows].sort((a, b) => a.chain - b.chain || a.block - b.block || a.index - b.index);

/** 60 blocks from sparse to dense, one block of 3.5 pages (split on the index axis), self-transfers. */
function busyWallet(chain = 1): Rec[] {
  return makeRows(chain, 60, (b) => (b === 31 ? 35 : b < 20 ? b % 3 : 1 + ((b * 7) % 9)), 1000, 5);
}

const BEHAVIOURS: Misbehaviour[][] = [
  [],
  ['shuffle-ties'],
  ['union'],
  ['repeat-earlier'],
  ['outside-slice'],
  ['shuffle-ties', 'union', 'repeat-earlier', 'outside-slice'],
];

describe('pageWindow proves every slice', () => {
  for (const misbehave of BEHAVIOURS) {
    it(`returns every row once, in block order, from a service with ${misbehave.length ? misbehave.join(' + ') : 'the contract’s behaviour'}`, async () => {
      const truth = busyWallet();
      for (const seed of [1, 2, 3]) {
        const src = fakeService(truth, misbehave, seed);
        const stats = newPagingStats();
        const { rows, done } = await collect(
          pageWindow({
            ...blockWindowOptions(src.fetch, { chainIds: [1], start: 1000, end: 1060, limit: 10, maxPage: 3, prefetch: 4 }),
            stats,
          }),
        );
        expect(ids(rows)).toEqual(ids(truth));
        expect(new Set(ids(rows)).size).toBe(rows.length);
        expect(done).toEqual([1]);
        // Only page 0 is ever asked for, and every request is bounded to the window.
        expect(src.requests.every((r) => r.page === 0)).toBe(true);
        expect(
          src.requests.every((r) => Number(r.filters.filter_block_number_gte) >= 1000 && Number(r.filters.filter_block_number_lt) <= 1060),
        ).toBe(true);
        if (misbehave.includes('outside-slice')) expect(stats.rejected.get(1)?.outside_slice).toBeGreaterThan(0);
      }
    });
  }

  it('pages several chains: one shared request while they are sparse, then the dense chains sharing their pieces', async () => {
    const truth = [...makeRows(1, 30, () => 2), ...makeRows(8453, 5, () => 1), ...makeRows(42161, 80, () => 3, 1000, 4)];
    const src = fakeService(truth, ['union', 'shuffle-ties']);
    const { rows, done } = await collect(
      pageWindow(blockWindowOptions(src.fetch, { chainIds: [1, 8453, 42161], start: 1000, end: 2000, limit: 10, prefetch: 3 })),
    );
    expect(ids(ordered(rows))).toEqual(ids(ordered(truth)));
    expect(new Set(ids(rows)).size).toBe(rows.length);
    expect([...done].sort((a, b) => a - b)).toEqual([1, 8453, 42161]);
    expect(src.requests[0]!.chains).toEqual([1, 8453, 42161]);
    // After the shared request, no request asks for the sparse chain; the dense ones share pieces.
    expect(src.requests.slice(1).every((r) => !r.chains.includes(8453))).toBe(true);
    expect(src.requests.slice(1).some((r) => r.chains.length === 2)).toBe(true);
    for (const chain of [1, 42161]) expect(ids(rows.filter((r) => r.chain === chain))).toEqual(ids(truth.filter((r) => r.chain === chain)));
  });

  it('asks about rows / target requests, and none that comes back full once the density is known', async () => {
    for (const misbehave of [[], ['union']] as Misbehaviour[][]) {
      const truth = makeRows(1, 400, (b) => 2 + (b % 5)); // 1,600 rows
      const src = fakeService(truth, misbehave);
      const density = new Map<number, number>();
      const first = newPagingStats();
      const a = await collect(
        pageWindow({
          ...blockWindowOptions(src.fetch, { chainIds: [1], start: 1000, end: 1200, limit: 100, prefetch: 4, density }),
          stats: first,
        }),
      );
      const second = newPagingStats();
      const b = await collect(
        pageWindow({
          ...blockWindowOptions(src.fetch, { chainIds: [1], start: 1200, end: 1400, limit: 100, prefetch: 4, density }),
          stats: second,
        }),
      );
      expect(ids([...a.rows, ...b.rows])).toEqual(ids(truth));
      const target = 70; // 0.7 of the limit
      // A sorted service's first full answer cuts the window exactly; the union's shows half the rows.
      if (misbehave.length === 0) expect(first.requests).toBeLessThanOrEqual(Math.ceil(a.rows.length / target) + 2);
      // The second window starts from the first one's density: cut at once, nothing wasted.
      expect(second.splits).toBe(0);
      expect(second.requests).toBeLessThanOrEqual(Math.ceil(b.rows.length / target) + 1);
    }
  });

  it('splits a block that holds more than a page on the row position, and fails typed when one position is over the limit', async () => {
    const dense = makeRows(1, 3, (b) => (b === 1 ? 95 : 2));
    const src = fakeService(dense, ['shuffle-ties']);
    const { rows } = await collect(
      pageWindow(blockWindowOptions(src.fetch, { chainIds: [1], start: 1000, end: 1003, limit: 10, prefetch: 2 })),
    );
    expect(ids(rows)).toEqual(ids(dense));
    expect(src.requests.some((r) => r.filters.filter_transaction_index_gte !== undefined)).toBe(true);

    // Three different rows at one (block, index): no axis is left to split a full answer of 3.
    const crowded: Rec[] = [0, 1, 2].map((k) => ({ chain: 1, block: 1000, index: 0, id: `1:1000:0:${k}` }));
    const again = fakeService(crowded);
    await expect(
      collect(pageWindow(blockWindowOptions(again.fetch, { chainIds: [1], start: 1000, end: 1001, limit: 3, prefetch: 2 }))),
    ).rejects.toBeInstanceOf(SliceTooDenseError);
  });

  it('keeps the job’s own bounds on a slice axis and drops and counts rows of a chain no request asked for', async () => {
    const truth = makeRows(1, 40, () => 6);
    const src = fakeService(truth);
    const opts = {
      ...blockWindowOptions(src.fetch, { chainIds: [1], start: 1000, end: 1040, limit: 10, prefetch: 2 }),
      baseFilters: { filter_transaction_index_gte: 2, filter_transaction_index_lt: 5 },
    };
    const { rows } = await collect(pageWindow(opts));
    expect(ids(rows)).toEqual(ids(truth.filter((r) => r.index >= 2 && r.index < 5)));
    expect(
      src.requests.every((r) => Number(r.filters.filter_transaction_index_gte) >= 2 && Number(r.filters.filter_transaction_index_lt) <= 5),
    ).toBe(true);

    const stray = fakeService([...makeRows(1, 3, () => 1), ...makeRows(99, 3, () => 1)]);
    const fetch = (chains: number[], filters: Record<string, string | number | bigint>, page: number, limit: number) =>
      stray.fetch([...chains, 99], filters, page, limit);
    const stats = newPagingStats();
    const strays = await collect(
      pageWindow({ ...blockWindowOptions(fetch, { chainIds: [1], start: 1000, end: 1003, limit: 10, prefetch: 2 }), stats }),
    );
    expect(ids(strays.rows)).toEqual(['1:1000:0', '1:1001:0', '1:1002:0']);
    expect(stats.rejected).toEqual(new Map([[1, { other_chain: 3 }]]));
  });

  it('reports an empty window as done with no rows and one request', async () => {
    const src = fakeService([]);
    const { rows, done } = await collect(
      pageWindow(blockWindowOptions(src.fetch, { chainIds: [1, 2], start: 1000, end: 2000, limit: 10, prefetch: 2 })),
    );
    expect(rows).toEqual([]);
    expect(done.sort()).toEqual([1, 2]);
    expect(src.requests).toHaveLength(1);
  });
});
