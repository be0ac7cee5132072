/**
 * What a stopping run commits of a batch still paging (SIGINT/SIGTERM; src/run/graceful-stop.ts):
 * the part of it whose rows are wholly received, as a shorter window [start, cut).
 *
 * The paginator yields a chain's rows in the order of the window's axis, slice after proven slice,
 * and says after each how far the chain is proven (RecordPage.provenTo): every row below that point
 * has been yielded. So when the run stops, the rows a chain has written are exactly those below
 * its proven point, unless a slice one value wide (a block, a second) was being cut on a finer
 * axis: its rows are then only partly written, and the chain's batch is abandoned whole.
 *
 * The cut is the proven point itself, not a window of the grid: with the default chunk (a day) a
 * batch is one window, and a stop would otherwise keep nothing of it. A window ending off the grid
 * is what `to: latest` commits at the head every run: the planner exports [cut, end) next, in the
 * same cell (src/plan/whole-replacements.ts, batch-cells.ts). The one place a cut may not fall is
 * inside a completed interval this batch replaces: the commit replaces every completed interval it
 * overlaps whole, so a cut there would drop the rows of its rest until they were exported again.
 * The cut then moves down to that interval's start, when no row at or above it was written.
 */
import type { Interval } from '../plan/index.js';
import type { WindowOutcome } from './export-windows.js';

export interface CutInput {
  /** The batch of one chain: [start, end) on the window's axis. */
  start: number;
  end: number;
  /** Where the chain is proven to (undefined: no slice proven yet). */
  provenTo: number | undefined;
  /** The axis position of the last row written (undefined: none); rows are written in order. */
  lastWritten: number | undefined;
  /** The unit's completed intervals before the run (the batch replaces those it overlaps, whole). */
  exported: readonly Interval[];
}

/** Where a stopping run cuts a chain's batch: it commits [start, cut); null when it can commit nothing. */
export function stopCut(c: CutInput): number | null {
  if (c.provenTo === undefined) return null;
  let cut = Math.min(c.provenTo, c.end);
  const inside = c.exported.find((e) => e.start < cut && cut < e.end);
  if (inside) cut = inside.start;
  if (cut <= c.start) return null;
  return c.lastWritten !== undefined && c.lastWritten >= cut ? null : cut;
}

/**
 * The outcomes of a batch committed up to `cut`, one per planned window: a window below the cut
 * is done; the window the cut falls in is abandoned, with the rows of its part that was committed
 * (`committed` names the interval the files hold); the windows above it are abandoned. The
 * files go on the last window holding committed rows.
 */
export function cutOutcomes(
  committed: WindowOutcome,
  windows: readonly Interval[],
  cut: number,
  rowsOf: (window: Interval, index: number) => number,
  abandoned: (window: Interval) => WindowOutcome,
): WindowOutcome[] {
  const { written, warnings, ...rest } = committed;
  const last = windows.reduce((at, w, i) => (w.start < cut ? i : at), -1);
  return windows.map((w, i): WindowOutcome => {
    if (w.start >= cut) return abandoned(w);
    const part = w.end > cut;
    const carries = i === last;
    return {
      ...rest,
      ...(part ? abandoned(w) : {}),
      start: w.start,
      end: w.end,
      rows: rowsOf(w, i),
      files: carries ? committed.files : 0,
      bytes: carries ? committed.bytes : 0,
      ...(carries && written ? { written, committed: [committed.start, cut] as [number, number] } : {}),
      ...(carries && warnings ? { warnings } : {}),
    };
  });
}
