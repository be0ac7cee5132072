/**
 * Rows per block (or per second) of each unit, from the records of its newest completed windows:
 * what a shard split balances new windows by, and what `plan --shard` and run reports show as
 * expected rows. A few reads per unit, made only when a split grows or `plan` is asked.
 */
import pLimit from 'p-limit';
import { length, type ExpectedRows, type Interval } from '../plan/index.js';
import type { WindowState } from './window-state.js';

/** Completed windows read per unit. */
const SAMPLE = 3;
/** Records read at once. */
const READS_AT_ONCE = 16;

export async function unitDensities(state: WindowState, completed: ReadonlyMap<string, Interval[]>): Promise<Map<string, number>> {
  const limit = pLimit(READS_AT_ONCE);
  const out = new Map<string, number>();
  await Promise.all(
    [...completed].map(async ([unitKey, intervals]) => {
      if (intervals.length === 0) return;
      const newest = [...intervals].sort((a, b) => b.end - a.end).slice(0, SAMPLE);
      const records = await Promise.all(newest.map((w) => limit(() => state.readCompleted(unitKey, w.start, w.end))));
      let rows = 0;
      let span = 0;
      for (const r of records) {
        if (!r || !Number.isSafeInteger(r.rows)) continue;
        rows += r.rows;
        span += length(r);
      }
      if (span > 0) out.set(unitKey, rows / span);
    }),
  );
  return out;
}

/** Expected rows of a window from its unit's density; undefined for a unit without one. */
export function expectedRowsFrom(densities: ReadonlyMap<string, number>): ExpectedRows {
  return (unitKey, window) => {
    const d = densities.get(unitKey);
    return d === undefined ? undefined : Math.round(d * length(window));
  };
}
