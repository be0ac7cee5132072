/**
 * Consecutive planned windows of a unit exported as one: a batch is a wider window, paged,
 * written (one file per partition, rolled at the file caps) and committed once, so a job of small
 * windows writes files sized for warehouses and one state record per batch. Its edge is read
 * before any of its rows, like a window's, and its commit replaces what it overlaps as a window's
 * does (src/state/window-state.ts).
 *
 * A unit's batch runs from a window over the windows that follow it without a gap in the same
 * cell (src/plan/batch-cells.ts): the UTC day for windows by time (a day is the `{date}`
 * partition: a batch never leaves two files in one), a span of 10,000 blocks for windows by block.
 * Cells are those of the default chunks: a batch holds no more than a window of the default chunk,
 * so progress commits as often, and the same windows always make the same batches (a window
 * exported again whole gets the files a fresh export would). Batches of the same target and
 * windows on several chains share their requests. Windows of a dataset whose rows are computed per
 * window (aggregates) or of a snapshot are never batched.
 */
import type { Interval } from '../plan/index.js';
import { batchable, joinsBatch } from '../plan/batch-cells.js';
import type { ExportWindow } from './export-windows.js';

/** A batch: one unit per chain over [first window's start, last window's end), and the planned windows it covers. */
export interface WindowBatch {
  units: ExportWindow[];
  windows: Interval[];
}

/**
 * The units' windows as batches (each window on its own when `batched` is false), in the order of
 * their first window in `units`. `targetOf`: what units of one target share (a batch never mixes targets).
 */
export function windowBatches(units: readonly ExportWindow[], batched: boolean, targetOf: (u: ExportWindow) => string): WindowBatch[] {
  const lines = new Map<string, { u: ExportWindow; at: number }[]>();
  units.forEach((u, at) => {
    const key = `${targetOf(u)}|${u.chainId}`;
    let line = lines.get(key);
    if (!line) lines.set(key, (line = []));
    line.push({ u, at });
  });
  const batches = new Map<string, WindowBatch & { at: number }>();
  for (const line of lines.values()) {
    line.sort((a, b) => a.u.start - b.u.start);
    let run: typeof line = [];
    const flush = () => {
      if (run.length === 0) return;
      const first = run[0]!;
      const windows = run.map((x) => ({ start: x.u.start, end: x.u.end }));
      const key = `${targetOf(first.u)}|${windows.map((w) => `${w.start}_${w.end}`).join(',')}`;
      // Exported again when any of its windows is (src/run/window-proof.ts).
      const again = run.some((x) => x.u.again === true);
      const unit = { ...first.u, end: windows[windows.length - 1]!.end, ...(again ? { again } : {}) };
      const at = Math.min(...run.map((x) => x.at));
      const batch = batches.get(key);
      if (batch) {
        batch.units.push(unit);
        batch.at = Math.min(batch.at, at);
      } else batches.set(key, { units: [unit], windows, at });
      run = [];
    };
    for (const x of line) {
      const first = run[0]?.u;
      const joins =
        first !== undefined &&
        batched &&
        batchable(first.dataset.capabilities) &&
        joinsBatch(first.axis, { start: first.start, end: run[run.length - 1]!.u.end }, x.u);
      if (!joins) flush();
      run.push(x);
    }
    flush();
  }
  return [...batches.values()].sort((a, b) => a.at - b.at).map(({ units: batchUnits, windows }) => ({ units: batchUnits, windows }));
}
