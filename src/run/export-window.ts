/**
 * What the export stage is given and gives back (src/run/export-windows.ts): the windows to export of
 * the plan, the options of an export, its progress events and each window's outcome.
 */
import type { DecodeTally } from './decode-tally.js';
import type { ListDataset, Axis } from '../datasets/dataset.js';
import { InsightExportError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { FileOutput } from '../sink/partitioned-writer.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { InsightClient } from '../source/client.js';
import type { RejectReason } from '../source/paginator.js';
import type { Filters } from '../source/query.js';
import type { WindowState } from '../state/window-state.js';

/** One window of one target on one chain: the unit of work, of commit and of state. */
export interface ExportWindow {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each dataset has its own row and target types; a unit of any dataset erases them
  dataset: ListDataset<any, any>;
  target: unknown;
  chainId: number;
  axis: Axis;
  start: number;
  end: number;
  /** The planner's unit key (`dataset/target/chain_id/axis`): the state folder of this unit's windows. */
  unitKey: string;
  /** The job's own filter_* values for this dataset. */
  filters: Filters;
  /** The table (`{dataset}` of the partitioning) the rows go to; the dataset's default without it. */
  table?: string;
  /** The unit holds rows of this window already: it is exported again (a reorganisation, --force, --rewind, a repair). */
  again?: boolean;
}

export interface ExportOptions {
  jobName: string;
  runId: string;
  client: InsightClient;
  /** Where the windows commit: their files go to its store. */
  state: WindowState;
  /** How the windows' files are written: the resolved output settings. */
  output: FileOutput;
  stagingDir: string;
  unitsInFlight: number;
  /**
   * Rows aimed at per request (default: what the largest limit allows). The limit sent is above
   * it, so that an answer proves its slice (fewer rows than the limit) while carrying about this many.
   */
  pageSize?: number;
  /** Cap on pages requested ahead per window (default: none; the run's RunRequestPool decides). */
  prefetch?: number;
  /**
   * Export consecutive windows of a target as one batch (output.batch_windows; see window-batches.ts).
   * Default false: every window is exported and committed on its own.
   */
  batchWindows?: boolean;
  /** Blocks at the windows' upper edges, recorded with each completed block window (reorganisations). */
  blocks?: BlockLookup;
  /** Iceberg: each table's field ids by column name, fixed before its first file (src/iceberg/field-ids.ts). */
  fieldIds?: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** The run stops: no batch starts, no request is sent (a signal, a lost lease, the end of the grace period). */
  signal?: AbortSignal;
  /**
   * Commits stop too: a window not committed yet is abandoned (a lost lease, the end of a stop's
   * grace period). Until then a stopped run commits what it has wholly received (src/run/stop-cut.ts).
   * Default: `signal` (a stop abandons every window in flight).
   */
  abandon?: AbortSignal;
  /** The unit's completed intervals before the run: a stop never cuts one this run replaces. */
  exported?: (unitKey: string) => readonly Interval[];
  logger: Logger;
  onProgress?(event: ProgressEvent): void;
}

export type ProgressEvent =
  /** One HTTP request sent to the service (any phase: checks, head searches, window edges, pages; retries too). */
  | { kind: 'request' }
  /** A page's rows arrived (not yet written nor committed; rows of a page later dropped count too). */
  | { kind: 'received'; unitKey: string; rows: number }
  /** Rows written to a window's files (committed with the window). */
  | { kind: 'rows'; unitKey: string; rows: number }
  | { kind: 'unit-done'; unitKey: string; start: number; end: number; rows: number; files: number; bytes: number }
  | { kind: 'unit-failed'; unitKey: string; start: number; end: number; error: string };

export interface WindowOutcome {
  unitKey: string;
  start: number;
  end: number;
  chainId: number;
  status: 'done' | 'failed' | 'abandoned';
  rows: number;
  files: number;
  bytes: number;
  /** The files a done window wrote: keys relative to the destination. */
  written?: { key: string; rows: number; bytes: number }[];
  /**
   * The interval committed with `written`, when it is wider than this window: the batch of
   * windows exported together (its files are counted once, on the batch's last window).
   */
  committed?: [number, number];
  error?: string;
  /** With `error`: the exit code it means (2 when no later run can cure it, 1 when one may; see ExitCode). */
  exitCode?: number;
  /** What the dataset found amiss in a window it exported all the same (e.g. NFT collections the explorer cut short). */
  warnings?: string[];
  /** Rows the service sent for this chain's window that were not written, by reason (see PagingStats.rejected). */
  rejected?: Partial<Record<RejectReason, number>>;
  /** Committed after the run was told to stop (its rows were all in). */
  duringStop?: boolean;
  /** A done window's rows by decode status (datasets that decode; src/run/decode-tally.ts). */
  decode?: DecodeTally;
}

/** A window stopped because the run is stopping (a signal, a lost lease): abandoned, not failed. */
export class WindowAbandonedError extends InsightExportError {
  override name = 'WindowAbandonedError';
}
