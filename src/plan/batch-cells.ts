/**
 * The cells that bound a batch of windows (src/run/window-batches.ts): the UTC day for windows by
 * time, a span of BLOCK_BATCH_SPAN blocks aligned to 0 for windows by block. A run exports the
 * consecutive windows of a cell as one batch; verify names missing windows the same way.
 */
import type { DatasetCapabilities } from '../datasets/dataset.js';
import type { Axis } from '../job/schema.js';
import { BLOCK_BATCH_SPAN } from '../settings/settings.js';
import type { Interval } from './intervals.js';

const DAY = 86_400;

/** The cell of a point of an axis. */
function batchCell(axis: Axis, at: number): number {
  return Math.floor(at / (axis === 'time' ? DAY : BLOCK_BATCH_SPAN));
}

/** Whether window `next` joins the batch `batch`: it starts where the batch ends, in the cell the batch starts in. */
export function joinsBatch(axis: Axis, batch: Interval, next: Interval): boolean {
  return batch.end === next.start && batchCell(axis, batch.start) === batchCell(axis, next.start);
}

/** Whether a dataset's windows are batched: not when its rows are computed per window (aggregates) nor for a snapshot. */
export function batchable(c: DatasetCapabilities): boolean {
  return c.readsJobAggregates !== true && c.extent !== 'snapshot';
}

/** Sorted windows, the consecutive ones of each cell joined, as a run exports them in batches. */
export function batchIntervals(windows: readonly Interval[], axis: Axis): Interval[] {
  const out: Interval[] = [];
  for (const w of windows) {
    const last = out[out.length - 1];
    if (last && joinsBatch(axis, last, w)) last.end = w.end;
    else out.push({ start: w.start, end: w.end });
  }
  return out;
}
