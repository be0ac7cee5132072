/**
 * A stopping run commits the part of a chain's batch it has wholly received (src/run/stop-cut.ts)
 * within its grace period: the rows its writer holds, in files named after the shorter window, with
 * the batch's edge (read before any of its rows; its hash commits to every block below it).
 */
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import { windowKey } from '../plan/index.js';
import { errorMessage } from '../errors.js';
import { fileStem, runIdInNames } from '../sink/file-names.js';
import { contentType } from '../sink/formats.js';
import type { PartitionedWriter, PlannedFile } from '../sink/partitioned-writer.js';
import type { BlockEdge } from '../state/window-state.js';
import type { ExportOptions, ExportWindow, WindowOutcome } from './export-windows.js';
import { cutOutcomes, stopCut } from './stop-cut.js';

/** One chain of a batch the stop found still paging. */
export interface ReceivedChain {
  unit: ExportWindow;
  /** The planned windows of the batch. */
  windows: readonly Interval[];
  writer: PartitionedWriter;
  edge: BlockEdge | undefined;
  opts: ExportOptions;
  log: Logger;
  /** Where the chain's rows are proven to, and the axis position of its last row written (stop-cut.ts). */
  provenTo: number | undefined;
  lastWritten: number | undefined;
  /** Rows written per planned window (batches of several windows). */
  windowRows: number[] | undefined;
  /** The chain's outcome over the whole batch (an abandoned one carries why). */
  outcome(status: 'done' | 'abandoned', rows: number, files: PlannedFile[]): WindowOutcome;
}

/** The outcomes of the batch's windows once the part received is committed; null when there is none, or its commit did not happen. */
export async function commitReceived(c: ReceivedChain): Promise<WindowOutcome[] | null> {
  const { unit: u, opts } = c;
  const abandon = opts.abandon ?? opts.signal;
  const cut = stopCut({
    start: u.start,
    end: u.end,
    provenTo: c.provenTo,
    lastWritten: c.lastWritten,
    exported: opts.exported?.(u.unitKey) ?? [],
  });
  if (cut === null || abandon?.aborted) return null;
  const part = { start: u.start, end: cut };
  try {
    const files = await c.writer.finishAs(
      fileStem(u.dataset.targetKey(u.target), windowKey(part), runIdInNames(opts.output.format, opts.runId)),
    );
    const type = contentType(opts.output.format, opts.output.compression);
    const staged = files.map((f) => ({ ...f, contentType: type }));
    await opts.state.commit({ unit_key: u.unitKey, ...part, run_id: opts.runId, files: staged, edge: c.edge }, { signal: abandon });
    const rows = files.reduce((n, f) => n + f.rows, 0);
    const abandoned = (w: Interval) => ({ ...c.outcome('abandoned', 0, []), ...w });
    const kept = { ...c.outcome('done', rows, files), duringStop: true };
    const each = cutOutcomes(kept, c.windows, cut, (_, i) => c.windowRows?.[i] ?? rows, abandoned);
    c.log.warn(
      { chainId: u.chainId, committed: [u.start, cut], abandoned: [cut, u.end], rows },
      'stopping: committed the part wholly received',
    );
    for (const o of each.filter((x) => x.status === 'done'))
      opts.onProgress?.({
        kind: 'unit-done',
        unitKey: u.unitKey,
        start: o.start,
        end: o.end,
        rows: o.rows,
        files: o.files,
        bytes: o.bytes,
      });
    return each;
  } catch (err) {
    c.log.warn({ chainId: u.chainId, err: errorMessage(err) }, 'stopping: the part wholly received was not committed');
    return null;
  }
}
