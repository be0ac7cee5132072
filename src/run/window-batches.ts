/**
 * Consecutive planned windows of a target exported as one: a batch is a wider window, paged,
 * written (one file per partition, rolled at the file caps) and committed once, so a job of small
 * windows writes files sized for warehouses and one state record per batch. Its edge is read
 * before any of its rows, like a window's, and its commit replaces what it overlaps as a window's
 * does (src/state/window-state.ts).
 *
 * A batch grows from the window a paging slot takes next, window after window, while:
 *  - the next window starts where the batch ends, for the same chains (they share their requests);
 *  - the rows it is expected to hold stay within `rows`, from the rows per axis unit the windows
 *    before found on each chain (unknown before the first window of a target ends: one window);
 *  - on time windows, the next window starts on the same UTC day (a day is the `{date}` partition:
 *    a batch never leaves two small files in one); on block windows, at most MAX_BLOCK_WINDOWS.
 * Windows of a dataset whose rows are computed per window (aggregates) are never batched.
 */
import type { Interval } from '../plan/index.js';
import type { ExportUnit } from './export-units.js';

/** Windows of one batch at most on the block axis, whose windows say nothing of their dates. */
export const MAX_BLOCK_WINDOWS = 1024;

const DAY = 86_400;

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
   * @param rows rows a batch is expected to hold at most (0: every window on its own)
   * @param targetOf what units of one target share (the batches never mix targets)
   */
  constructor(
    groups: WindowGroup[],
    private readonly rows: number,
    private readonly targetOf: (u: ExportUnit) => string,
  ) {
    for (const g of groups) this.byStart.set(this.startKey(g[0]!, g[0]!.start), g);
  }

  /**
   * The batch that starts with `group`, taking the windows it covers; null when an earlier batch
   * took the group. `density`: rows per axis unit of each chain, as the target's windows found them.
   */
  take(group: WindowGroup, density: ReadonlyMap<number, number>): WindowBatch | null {
    if (this.taken.has(group)) return null;
    this.taken.add(group);
    const first = group[0]!;
    const chains = chainSet(group);
    const windows: Interval[] = [{ start: first.start, end: first.end }];
    let expected = this.expectedRows(group, density);
    let end = first.end;
    while (this.rows > 0 && !perWindowRows(first)) {
      const next = this.byStart.get(this.startKey(first, end));
      if (!next || this.taken.has(next) || chainSet(next) !== chains) break;
      if (first.axis === 'time' && Math.floor(next[0]!.start / DAY) !== Math.floor(first.start / DAY)) break;
      if (first.axis === 'block' && windows.length >= MAX_BLOCK_WINDOWS) break;
      const more = this.expectedRows(next, density);
      if (!(expected + more <= this.rows)) break;
      this.taken.add(next);
      expected += more;
      end = next[0]!.end;
      windows.push({ start: next[0]!.start, end });
    }
    return { units: group.map((u) => ({ ...u, end })), windows };
  }

  private startKey(u: ExportUnit, start: number): string {
    return `${this.targetOf(u)}|${start}`;
  }

  /** The most rows a chain of the group is expected to hold; NaN when a chain's density is not known yet. */
  private expectedRows(group: WindowGroup, density: ReadonlyMap<number, number>): number {
    return Math.max(...group.map((u) => (density.get(u.chainId) ?? Number.NaN) * (u.end - u.start)));
  }
}

const chainSet = (g: WindowGroup) =>
  g
    .map((u) => u.chainId)
    .sort((a, b) => a - b)
    .join(',');

/** A dataset whose rows depend on the window they were computed over (aggregates carry its bounds). */
const perWindowRows = (u: ExportUnit) => u.dataset.capabilities.readsJobAggregates === true || u.dataset.capabilities.extent === 'snapshot';
