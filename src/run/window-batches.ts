/**
 * Consecutive planned windows of a target exported as one: a batch is a wider window, paged,
 * written (one file per partition, rolled at the file caps) and committed once, so a job of small
 * windows writes files sized for warehouses and one state record per batch. Its edge is read
 * before any of its rows, like a window's, and its commit replaces what it overlaps as a window's
 * does (src/state/window-state.ts).
 *
 * A batch grows from the window a paging slot takes next, window after window, while the next
 * window starts where the batch ends, for the same chains (they share their requests), in the same
 * cell (src/plan/batch-cells.ts): the UTC day for windows by time (a day is the `{date}`
 * partition: a batch never leaves two files in one), a span of 10,000 blocks for windows by block. Cells are
 * those of the default chunks: a batch holds no more than a window of the default chunk, so
 * progress commits as often, and the same windows always make the same batches (a window exported
 * again whole gets the files a fresh export would). Windows of a dataset whose rows are computed
 * per window (aggregates) or of a snapshot are never batched.
 */
import type { Interval } from '../plan/index.js';
import { batchable, joinsBatch } from '../plan/batch-cells.js';
import type { ExportUnit } from './export-units.js';

/** A batch: one unit per chain over [first window's start, last window's end), and the planned windows it covers. */
export interface WindowBatch {
  units: ExportUnit[];
  windows: Interval[];
}

/** Windows of one target and window, one unit per chain (they share their requests). */
type WindowGroup = ExportUnit[];

export class WindowBatches {
  /** Groups by target and start. */
  private readonly byStart = new Map<string, WindowGroup>();
  private readonly taken = new Set<WindowGroup>();

  /**
   * @param batched false: every window on its own
   * @param targetOf what units of one target share (the batches never mix targets)
   */
  constructor(
    groups: WindowGroup[],
    private readonly batched: boolean,
    private readonly targetOf: (u: ExportUnit) => string,
  ) {
    for (const g of groups) this.byStart.set(this.startKey(g[0]!, g[0]!.start), g);
  }

  /** The batch that starts with `group`, taking the windows it covers; null when an earlier batch took it. */
  take(group: WindowGroup): WindowBatch | null {
    if (this.taken.has(group)) return null;
    this.taken.add(group);
    const first = group[0]!;
    const chains = chainSet(group);
    const windows: Interval[] = [{ start: first.start, end: first.end }];
    let end = first.end;
    while (this.batched && batchable(first.dataset.capabilities)) {
      const next = this.byStart.get(this.startKey(first, end));
      const joins = next && joinsBatch(first.axis, { start: first.start, end }, next[0]!);
      if (!next || !joins || this.taken.has(next) || chainSet(next) !== chains) break;
      this.taken.add(next);
      end = next[0]!.end;
      windows.push({ start: next[0]!.start, end });
    }
    return { units: group.map((u) => ({ ...u, end })), windows };
  }

  private startKey(u: ExportUnit, start: number): string {
    return `${this.targetOf(u)}|${start}`;
  }
}

const chainSet = (g: WindowGroup) =>
  g
    .map((u) => u.chainId)
    .sort((a, b) => a - b)
    .join(',');
