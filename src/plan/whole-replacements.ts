/**
 * A window exported again replaces every completed interval of its unit it overlaps, files and
 * all (src/state/window-state.ts). A completed interval may span many grid windows (a batch of
 * windows committed together, a compacted run of windows), so the planner exports such an
 * interval again whole, as one window: never a part of it, whose replacement would drop the rows
 * of the rest until they are exported again.
 */
import { cutOnGrid, merge, type Interval } from './intervals.js';

const overlaps = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;

/** `todo` widened to cover whole every exported interval it overlaps. */
export function coverWhole(todo: readonly Interval[], exported: readonly Interval[]): Interval[] {
  return merge([...todo, ...exported.filter((e) => todo.some((t) => overlaps(t, e)))]);
}

/**
 * An interval of the plan cut into windows: each part of it inside an exported interval is one window
 * (that interval, or its part the interval holds), the rest is cut on the grid.
 */
export function windowsOf(interval: Interval, grid: number, exported: readonly Interval[]): Interval[] {
  // Completed intervals of a unit never overlap: each is its own window, even when two touch.
  const inside = [...exported]
    .sort((a, b) => a.start - b.start)
    .map((e) => ({ start: Math.max(e.start, interval.start), end: Math.min(e.end, interval.end) }))
    .filter((e) => e.start < e.end);
  const out: Interval[] = [];
  let cursor = interval.start;
  for (const e of inside) {
    if (e.start > cursor) out.push(...cutOnGrid({ start: cursor, end: e.start }, grid));
    out.push(e);
    cursor = e.end;
  }
  if (cursor < interval.end) out.push(...cutOnGrid({ start: cursor, end: interval.end }, grid));
  return out;
}
