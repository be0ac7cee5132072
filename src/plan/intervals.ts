/**
 * Half-open integer intervals [start, end) over block numbers or unix seconds, and sets of them.
 * A "normalised" set is sorted by start, with no empty, overlapping or touching intervals.
 */
export interface Interval {
  /** Inclusive. */
  start: number;
  /** Exclusive. */
  end: number;
}

export function interval(start: number, end: number): Interval {
  return { start, end };
}

export function isEmpty(i: Interval): boolean {
  return i.end <= i.start;
}

export function length(i: Interval): number {
  return Math.max(0, i.end - i.start);
}

export function totalLength(set: readonly Interval[]): number {
  return merge(set).reduce((n, i) => n + length(i), 0);
}

/** Sorted, disjoint, non-touching: [0,5) + [5,7) -> [0,7). Empty intervals are dropped. */
export function merge(set: readonly Interval[]): Interval[] {
  const sorted = set.filter((i) => !isEmpty(i)).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ start: i.start, end: i.end });
  }
  return out;
}

/** Every point of `from` that is in none of `remove`, as a normalised set. */
export function subtract(from: readonly Interval[], remove: readonly Interval[]): Interval[] {
  const a = merge(from);
  const b = merge(remove);
  const out: Interval[] = [];
  let j = 0;
  for (const i of a) {
    let cursor = i.start;
    while (j < b.length && b[j]!.end <= cursor) j++;
    let k = j;
    while (k < b.length && b[k]!.start < i.end) {
      const r = b[k]!;
      if (r.start > cursor) out.push({ start: cursor, end: r.start });
      cursor = Math.max(cursor, r.end);
      if (cursor >= i.end) break;
      k++;
    }
    if (cursor < i.end) out.push({ start: cursor, end: i.end });
  }
  return out;
}

export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const x = merge(a);
  const y = merge(b);
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    const start = Math.max(x[i]!.start, y[j]!.start);
    const end = Math.min(x[i]!.end, y[j]!.end);
    if (start < end) out.push({ start, end });
    if (x[i]!.end < y[j]!.end) i++;
    else j++;
  }
  return out;
}

/** Is the point, or every point of the interval, covered by the set? (An empty interval is covered.) */
export function contains(set: readonly Interval[], what: number | Interval): boolean {
  const probe = typeof what === 'number' ? { start: what, end: what + 1 } : what;
  if (isEmpty(probe)) return true;
  return subtract([probe], set).length === 0;
}

/** The parts of `within` not covered by `set` (what is still missing). */
export function gaps(set: readonly Interval[], within: Interval): Interval[] {
  return subtract([within], set);
}

/**
 * Cuts an interval at multiples of `size` (the grid starts at 0, or at `origin`):
 * [15, 42) with size 10 -> [15,20) [20,30) [30,40) [40,42).
 */
export function cutOnGrid(i: Interval, size: number, origin = 0): Interval[] {
  if (!(size > 0) || !Number.isSafeInteger(size)) throw new RangeError(`grid size must be a positive integer, got ${size}`);
  const out: Interval[] = [];
  let start = i.start;
  while (start < i.end) {
    const cell = Math.floor((start - origin) / size);
    const cellEnd = origin + (cell + 1) * size;
    const end = Math.min(cellEnd, i.end);
    out.push({ start, end });
    start = end;
  }
  return out;
}

/** How many intervals cutOnGrid(i, size, origin) cuts, without cutting them. */
export function countCutsOnGrid(i: Interval, size: number, origin = 0): number {
  if (isEmpty(i)) return 0;
  return Math.ceil((i.end - origin) / size) - Math.floor((i.start - origin) / size);
}
