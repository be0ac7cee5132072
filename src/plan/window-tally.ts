/**
 * A stream's windows counted once each, on the job's chunk grid over the range it asks for: every
 * window is completed, missing (a part the service serves is not exported) or pending (its part not
 * exported is not served yet: past the head minus the safety lag). `verify`, `plan` and `run` count
 * from the one plan (`StreamCoverage`), so their numbers agree and add up: planned = completed +
 * missing + pending. Batches, records and files are other things, never counted here.
 */
import type { JobRange } from '../job/job.js';
import { merge, subtract, totalLength, type Interval } from './intervals.js';
import type { StreamCoverage } from './plan.js';

export interface WindowTally {
  planned: number;
  completed: number;
  missing: number;
  pending: number;
}

export const NO_WINDOWS: WindowTally = Object.freeze({ planned: 0, completed: 0, missing: 0, pending: 0 });

/**
 * A stream's windows by state. `done`: its completed intervals (any order); the range asked for is
 * its planned range and, after it, what is pending.
 */
export function tallyWindows(c: Pick<StreamCoverage, 'range' | 'pending'>, done: readonly Interval[], chunk: number): WindowTally {
  const cells = windowCells(c, done, chunk);
  if (!cells) return NO_WINDOWS;
  const planned = totalLength([cells.whole]);
  const missing = totalLength(cells.missing);
  const pending = totalLength(cells.pending);
  return { planned, completed: planned - missing - pending, missing, pending };
}

/** The grid windows (as cell numbers, see cellsOf) of the range asked for, and those missing and pending; null: none asked for. */
export function windowCells(
  c: Pick<StreamCoverage, 'range' | 'pending'>,
  done: readonly Interval[],
  chunk: number,
): { whole: Interval; missing: Interval[]; pending: Interval[] } | null {
  const asked = merge([...(c.range ? [c.range] : []), ...c.pending]);
  if (asked.length === 0) return null;
  const whole = cellsOf([{ start: asked[0]!.start, end: asked.at(-1)!.end }], chunk)[0]!;
  const missing = cellsOf(c.range ? subtract([c.range], done) : [], chunk);
  return { whole, missing, pending: subtract(cellsOf(c.pending, chunk), missing) };
}

/** Tallies added up. */
export function addTallies(tallies: Iterable<WindowTally>): WindowTally {
  const sum = { ...NO_WINDOWS };
  for (const t of tallies) for (const k of Object.keys(sum) as (keyof WindowTally)[]) sum[k] += t[k];
  return sum;
}

/** The grid windows (as cell numbers [first, last + 1)) an interval set touches. */
export function cellsOf(set: readonly Interval[], chunk: number): Interval[] {
  return merge(set.map((i) => ({ start: Math.floor(i.start / chunk), end: Math.floor((i.end - 1) / chunk) + 1 })));
}

/**
 * The head (a block number, or a block time in unix seconds) at which the service serves a fixed
 * range to its end: its last point plus the safety lag (the planner's exportable end is head - lag + 1).
 */
export function headServingAll(range: Pick<JobRange, 'safety_lag'>, to: number): number {
  return to - 1 + range.safety_lag;
}
