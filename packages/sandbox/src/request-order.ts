import { mix32, unit } from './prng.js';

/**
 * Orders that change per request, as a ClickHouse query returns them: pure functions of the
 * request's ranks, so a request counter makes every answer reproducible.
 */

/** `items` ordered by rank (ties by position): "no order at all", drawn per request. */
export function shuffled<T>(items: readonly T[], rank: (item: T, index: number) => number): T[] {
  return items
    .map((item, index) => ({ item, index, r: rank(item, index) }))
    .sort((a, b) => a.r - b.r || a.index - b.index)
    .map((e) => e.item);
}

/** `rows` (sorted by key) with each run of equal keys ordered by rank instead (in place). */
export function shuffleTies<K>(rows: number[], keyOf: (row: number) => K, rank: (row: number) => number): number[] {
  let start = 0;
  while (start < rows.length) {
    const key = keyOf(rows[start]!);
    let end = start + 1;
    while (end < rows.length && keyOf(rows[end]!) === key) end++;
    if (end - start > 1) shuffled(rows.slice(start, end), rank).forEach((row, i) => (rows[start + i] = row));
    start = end;
  }
  return rows;
}

/**
 * A misbehaving server: with probability `rate` (drawn from `draw`) a page after the first starts
 * k rows early, at rows of blocks before the block its first row is in (rows an earlier page
 * carried), and holds only its first limit - k own rows (at least one, unless limit is 1).
 * Returns null when the page is served as is.
 */
export function repeatEarlierRows<K>(
  rows: readonly number[],
  skip: number,
  end: number,
  blockOf: (row: number) => K,
  rate: number,
  draw: number,
): number[] | null {
  if (rate <= 0 || skip <= 0 || skip >= rows.length || unit(draw) >= rate) return null;
  const block = blockOf(rows[skip]!);
  let earlier = skip;
  while (earlier > 0 && blockOf(rows[earlier - 1]!) === block) earlier--;
  if (earlier === 0) return null;
  const width = end - skip;
  const k = 1 + (mix32(draw) % Math.min(earlier, Math.max(1, width - 1)));
  return [...rows.slice(earlier - k, earlier), ...rows.slice(skip, skip + width - k)];
}
