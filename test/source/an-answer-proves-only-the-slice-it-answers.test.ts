/**
 * A short answer proves its slice only when it is an answer for that slice (src/source/bad-answers.ts).
 * A service (or a proxy, cache or replica in front of it) that sometimes sends the answer of the
 * neighbouring slice, an empty answer for a piece a wider answer showed rows in, a full page cut
 * to `limit - 1` rows, or rows the window's own checks refuse, is asked again (with another
 * limit, so that no cache keyed by URL answers again) and the window's rows stay exact; a service
 * that never answers the slice ends the window with BadAnswerError (exit 1) naming the slice.
 */
import { describe, expect, it } from 'vitest';
import { BadAnswerError, type AnswerPolicy, type BadAnswerReason } from '../../src/source/bad-answers.js';
import { ExitCode } from '../../src/errors.js';
import { newPagingStats, pageWindow } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';
import { blockWindowOptions, collect, fakeService, makeRows, type Rec, type RecFetch } from './paginator-fixtures.js';

const ids = (rows: Rec[]) => rows.map((r) => r.id).sort();

/** Counts the bad answers by reason; asks again at once, up to 6 attempts. */
function countingPolicy(): AnswerPolicy & { counts: Partial<Record<BadAnswerReason, number>> } {
  const counts: Partial<Record<BadAnswerReason, number>> = {};
  return {
    counts,
    note: (reason) => {
      counts[reason] = (counts[reason] ?? 0) + 1;
    },
    retry: (attempt) => Promise.resolve(attempt < 6),
  };
}

/** The block range a request asks for. */
const rangeOf = (f: Filters) => [Number(f.filter_block_number_gte), Number(f.filter_block_number_lt)] as const;

/** Rows of 80 blocks, 1 to 4 a block (about 200 rows): windows of limit 10 are cut into many pieces. */
const truth = () => makeRows(1, 80, (b) => 1 + (b % 4), 1000);

/** A fetch that asks the service with `filters` changed by `wrong` on the requests it picks. */
function misanswering(
  fetch: RecFetch,
  pick: (n: number, f: Filters) => boolean,
  wrong: (f: Filters) => Filters,
): RecFetch & { bad: number } {
  let n = 0;
  const f = ((chains, filters, page, limit) => {
    if (!pick(++n, filters)) return fetch(chains, filters, page, limit);
    f.bad++;
    return fetch(chains, wrong(filters), page, limit);
  }) as RecFetch & { bad: number };
  f.bad = 0;
  return f;
}

describe('an answer proves only the slice it answers', () => {
  it('the answer of the neighbouring slice is asked again, with another limit, and the rows are exact', async () => {
    const rows = truth();
    const src = fakeService(rows);
    const limits: number[] = [];
    // Every third request is answered as the same-width range just below the one asked.
    const fetch = misanswering(
      (chains, filters, page, limit) => src.fetch(chains, filters, page, limit),
      (n) => n % 3 === 0,
      (f) => {
        const [lo, hi] = rangeOf(f);
        return { ...f, filter_block_number_gte: lo - (hi - lo), filter_block_number_lt: lo };
      },
    );
    const answers = countingPolicy();
    const stats = newPagingStats();
    const options = blockWindowOptions(fetch, { chainIds: [1], start: 1000, end: 1080, limit: 10, prefetch: 3 });
    const { rows: got } = await collect(
      pageWindow({
        ...options,
        stats,
        answers,
        fetch: (chains, filters, held, limit) => {
          limits.push(limit);
          return options.fetch(chains, filters, held, limit);
        },
      }),
    );
    expect(ids(got)).toEqual(ids(rows));
    expect(fetch.bad).toBeGreaterThan(3);
    // Each neighbouring answer that held rows was refused (the empty ones prove nothing wrong: nothing tells them apart).
    expect(answers.counts.outside_slice).toBeGreaterThan(0);
    expect(stats.rejected.get(1)?.outside_slice).toBeGreaterThan(0);
    // Asked again with limit - 1 (a URL no cache saw).
    expect(limits).toContain(9);
  });

  it('a service that never answers the slice ends the window with BadAnswerError (exit 1) naming it', async () => {
    const src = fakeService(truth());
    const fetch: RecFetch = (chains, filters, page, limit) => {
      const [lo, hi] = rangeOf(filters);
      return src.fetch(chains, { ...filters, filter_block_number_gte: lo - (hi - lo), filter_block_number_lt: lo }, page, limit);
    };
    const answers = countingPolicy();
    const err = await collect(
      pageWindow({ ...blockWindowOptions(fetch, { chainIds: [1], start: 1040, end: 1080, limit: 10, prefetch: 3 }), answers }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadAnswerError);
    expect((err as BadAnswerError).exitCode).toBe(ExitCode.failed);
    expect((err as BadAnswerError).reason).toBe('outside_slice');
    expect((err as Error).message).toMatch(/block_number \[1040, 1080\).* on chain 1/);
    expect(answers.counts.outside_slice).toBe(6);
  });

  it('an empty answer for a piece a wider answer showed rows in is asked again', async () => {
    const rows = truth();
    const src = fakeService(rows);
    // The window's first answer is full: the blocks it shows hold rows. Each piece cut from it that
    // holds one of those blocks comes back empty once (a shard of the index missing for a moment).
    const shown = new Set<number>();
    const emptied = new Set<string>();
    const fetch: RecFetch = async (chains, filters, page, limit) => {
      const [lo, hi] = rangeOf(filters);
      const answer = await src.fetch(chains, filters, page, limit);
      if (lo === 1000 && hi === 1080) for (const r of answer) shown.add(r.block);
      else if ([...shown].some((b) => b >= lo && b < hi) && !emptied.has(JSON.stringify(filters))) {
        emptied.add(JSON.stringify(filters));
        return [];
      }
      return answer;
    };
    const answers = countingPolicy();
    const { rows: got } = await collect(
      pageWindow({ ...blockWindowOptions(fetch, { chainIds: [1], start: 1000, end: 1080, limit: 10, prefetch: 3 }), answers }),
    );
    expect(ids(got)).toEqual(ids(rows));
    expect(emptied.size).toBeGreaterThan(0);
    expect(answers.counts.fewer_than_known).toBe(emptied.size);
  });

  it('an empty answer where the density of the windows before expects many rows is asked once more; a second empty one is taken', async () => {
    const rows = makeRows(1, 40, () => 2, 1000); // 80 rows in blocks 1000-1039
    const src = fakeService(rows);
    let emptied = 0;
    // The service answers the window's first request with no rows once (an index shard missing for a moment).
    const fetch: RecFetch = (chains, filters, page, limit) => {
      if (rangeOf(filters)[0] === 1000 && emptied++ === 0) return Promise.resolve([]);
      return src.fetch(chains, filters, page, limit);
    };
    const answers = countingPolicy();
    // A window before with 1.5 rows per block: 60 rows expected in these 40 blocks (asked whole: below the 70 a request aims at).
    const density = new Map([[1, 1.5]]);
    const options = { chainIds: [1], start: 1000, end: 1040, limit: 100, prefetch: 3, density };
    const { rows: got } = await collect(pageWindow({ ...blockWindowOptions(fetch, options), answers }));
    expect(ids(got)).toEqual(ids(rows));
    expect(answers.counts.unexpectedly_empty).toBe(1);

    // A window truly empty after one like it: asked twice, then taken as empty.
    density.set(1, 1.5);
    const before = src.requests.length;
    const empty = await collect(pageWindow({ ...blockWindowOptions(fetch, { ...options, start: 2000, end: 2040 }), answers }));
    expect(empty.rows).toEqual([]);
    expect(src.requests.length - before).toBe(2);
    expect(answers.counts.unexpectedly_empty).toBe(2);
  });

  it('a full page cut to limit - 1 rows is cut like a full one, and the rows are exact', async () => {
    const rows = truth();
    const src = fakeService(rows);
    // A proxy dropping the last row of every full page (per chain), as a broken CDN does.
    const fetch: RecFetch = async (chains, filters, page, limit) => {
      const answer = await src.fetch(chains, filters, page, limit);
      return answer.length >= limit ? answer.slice(0, limit - 1) : answer;
    };
    const answers = countingPolicy();
    const stats = newPagingStats();
    const { rows: got } = await collect(
      pageWindow({ ...blockWindowOptions(fetch, { chainIds: [1], start: 1000, end: 1080, limit: 10, prefetch: 3 }), answers, stats }),
    );
    expect(ids(got)).toEqual(ids(rows));
    expect(answers.counts.cut_page).toBeGreaterThan(0);
    expect(stats.splits).toBeGreaterThan(0);
  });

  it("rows the window's check refuses (a timestamp in milliseconds, a block of another branch) make the answer no proof", async () => {
    const rows = truth();
    const src = fakeService(rows);
    // Every other answer holds a row of block 1010 with a wrong hash (here: a flag the check reads).
    let n = 0;
    const fetch: RecFetch = async (chains, filters, page, limit) => {
      const answer = await src.fetch(chains, filters, page, limit);
      return ++n % 2 === 0 ? answer.map((r) => (r.block === 1010 ? { ...r, foreign: undefined, self: true } : r)) : answer;
    };
    const answers = countingPolicy();
    const { rows: got } = await collect(
      pageWindow({
        ...blockWindowOptions(fetch, { chainIds: [1], start: 1000, end: 1080, limit: 10, prefetch: 3 }),
        answers,
        check: (r) => (r.block === 1010 && r.self ? 'block_hash' : null),
      }),
    );
    expect(ids(got)).toEqual(ids(rows));
    expect(got.every((r) => !r.self)).toBe(true);
    expect(answers.counts.block_hash).toBeGreaterThan(0);
  });
});
