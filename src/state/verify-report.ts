/** What `insight-export verify` reports and is asked (src/state/verify.ts): the problems it names, per unit and in all. */
import type { ContentReport } from './verify-content.js';
import type { Axis, Job } from '../job/schema.js';
import type { Interval, PlanOptions } from '../plan/index.js';
import type { ObjectStore } from '../store/store.js';
import type { LeaseRecord } from './lease.js';
import type { WindowRecord } from './window-state.js';
import type { OutputFormat } from '../sink/sink.js';
import type { BatchWindows } from '../settings/settings.js';

export type VerifyProblemKind =
  | 'missing-windows'
  | 'nothing-exported'
  | 'overlap'
  | 'bad-marker'
  | 'missing-file'
  | 'size-mismatch'
  | 'row-count-mismatch'
  | 'duplicate-rows'
  | 'unreadable-file'
  | 'unreferenced-file'
  | 'pending-commit'
  /** Files of another format than the job's: a run refuses the destination (src/state/destination-format.ts). */
  | 'other-format'
  /** verify --chain-hashes: a window whose edge or rows are no longer the service's blocks. */
  | 'chain-hash'
  /** verify --recount: a window whose files hold another number of rows than the service counts. */
  | 'recount-mismatch'
  /** verify --content: a file whose SHA-256 is not the one recorded when it was written. */
  | 'content-mismatch'
  /** An Iceberg table whose current snapshot is not the state's live files, or names a missing file (src/iceberg/). */
  | 'iceberg-table';

/**
 * Problems of one completed window that exporting it again repairs (`run --repair`): its files
 * gone, changed, unreadable or holding a row twice, or another number of rows than the service has.
 */
export const WINDOW_DAMAGE: ReadonlySet<VerifyProblemKind> = new Set([
  'missing-file',
  'size-mismatch',
  'row-count-mismatch',
  'unreadable-file',
  'duplicate-rows',
  'recount-mismatch',
  'content-mismatch',
]);

export interface VerifyProblem {
  kind: VerifyProblemKind;
  unit?: string;
  /** [start, end) of the window concerned. */
  window?: [number, number];
  /** Missing windows, as the planner cuts them. */
  windows?: [number, number][];
  key?: string;
  message: string;
  /** An unreferenced file that a pending marker names (a commit under way, or left by a crash: its owner's next run removes it). */
  pending?: boolean;
}

export interface StreamSummary {
  unit: string;
  /** Expected range [start, end); null when nothing is expected yet (to: latest, nothing exported). */
  range: [number, number] | null;
  /** The stream's windows on the chunk grid of the range asked for, each counted once: planned = completed + missing + pending. */
  windows_planned: number;
  windows_completed: number;
  windows_missing: number;
  /** Not served yet (past the service's head minus the safety lag): a later run exports them, not a problem. */
  windows_pending: number;
  /** Missing windows, as a run exports them (batches when batch_windows is on). */
  missing: [number, number][];
  /** What is not served yet and not completed, [start, end) each. */
  pending: [number, number][];
}

/** A chain whose fixed range the service does not serve to its end yet (verify, with the service's head). */
export interface PendingTail {
  chain_id: number;
  axis: Axis;
  /** Windows of the job's streams on this chain not served yet. */
  windows: number;
  /** [start, end): from the service's head minus the safety lag to the range's `to`. */
  range: [number, number];
  /** The service's head now: a block number, or a block time (unix seconds) for a range by time. */
  head: number | null;
  /** The head at which the whole range is served (`to` - 1 + the safety lag): the next run after it exports the rest. */
  exportable_at_head: number;
}

/** One completed window against the service's count (verify --recount). */
export interface RecountedWindow {
  unit: string;
  chain_id: number;
  window: [number, number];
  /** Rows the window's files hold (files that are gone hold none). */
  files_rows: number;
  /** Rows the service counts in the window (null: not provable, see `reason`). */
  service_rows: number | null;
  /** ok: equal; short: the files hold fewer rows; extra: more; not-provable: the service's count cannot be compared. */
  status: 'ok' | 'short' | 'extra' | 'not-provable';
  reason?: string;
}

export interface RecountReport {
  /** Completed windows compared with the service's count. */
  windows_checked: number;
  windows_ok: number;
  /** Windows whose files hold another number of rows than the service counts (to export again). */
  mismatches: RecountedWindow[];
  /** Windows whose count the service's answer cannot prove, with the reason. */
  not_provable: RecountedWindow[];
  /** Units of datasets whose rows are not the service's rows one for one: not recounted. */
  skipped: { unit: string; reason: string }[];
  /** Count requests sent (retries not included). */
  requests: number;
  /** requests x 1000 / windows_checked (null when no window was checked). */
  requests_per_1000_windows: number | null;
}

/** What the files of completed windows hold, as verify found them: for the recount. */
export interface WindowFiles {
  /** Rows the window's files hold (counted, or as recorded with `quick`; a file that is gone holds none). */
  rows(rec: WindowRecord): number;
  /** The window's files that are there. */
  present(rec: WindowRecord): string[];
}

export interface VerifyReport {
  job: string;
  destination: string;
  ok: boolean;
  units: StreamSummary[];
  /**
   * The job's windows on the chunk grid, each counted once: planned = completed + missing + pending
   * (a batch counts the windows it covers; a window partly exported counts as missing or pending);
   * damaged: completed windows a damaged record covers (a re-export repairs them, WINDOW_DAMAGE).
   */
  windows: { planned: number; completed: number; damaged: number; missing: number; pending: number };
  /** Chains whose fixed range the service does not serve to its end yet. */
  pending: PendingTail[];
  files: { listed: number; checked_rows: number; unreferenced: number };
  /** How the files' contents were compared (by size, or by SHA-256 with --content) and what that found. */
  content: ContentReport;
  /** counted: rows read from the files; distinct: distinct item_ids per window, added up (null: --quick). */
  rows: { recorded: number; counted: number | null; distinct: number | null };
  lease: (LeaseRecord & { active: boolean }) | null;
  /** State objects of units the job no longer has (an older version of the job): informational. */
  other_units: string[];
  /** With a recount: the files against the service's counts. */
  recount?: RecountReport;
  problems: VerifyProblem[];
}

export interface VerifyOptions {
  store: ObjectStore;
  /** The job with wallet names resolved to addresses (unit keys hold addresses). */
  job: Job;
  /** Sizes only, no reading of the files for rows (default false: row counts are read from every file). */
  quick?: boolean;
  /** Read every file and compare its SHA-256 with the recorded one (in the same read as its rows, unless `quick`). */
  content?: boolean;
  concurrency?: number;
  now?: () => number;
  /**
   * The job's resolved output settings: files another template or job writes are not its own, another
   * format is a problem; with batch_windows "on", missing windows are named as the batches a run exports.
   */
  output?: { partitioning: string; format: OutputFormat; batchWindows?: BatchWindows };
  /** Check the files (and recount) only of the completed windows that overlap this interval (run --repair --from/--to). */
  within?: Interval;
  /** Files no window lists that something else still names (an Iceberg table's older snapshots): not reported as unreferenced. */
  retained?: ReadonlySet<string>;
  /**
   * The service's heads, as a run plans with them (src/run): a fixed `to` past the head minus the
   * safety lag is pending, not missing. Without it, the whole fixed range is expected.
   */
  service?: Pick<PlanOptions, 'latest' | 'serves'>;
  /** Compares the completed windows' files with the service's counts (src/run/recount.ts). */
  recount?: (records: WindowRecord[], files: WindowFiles) => Promise<RecountReport>;
}

/** The completed windows a re-export repairs (problems of a WINDOW_DAMAGE kind), once each, by unit and start. */
export function damagedWindows(problems: readonly VerifyProblem[]): { unit: string; window: [number, number] }[] {
  const out = new Map<string, { unit: string; window: [number, number] }>();
  for (const p of problems) {
    if (!WINDOW_DAMAGE.has(p.kind) || !p.unit || !p.window) continue;
    out.set(`${p.unit}|${p.window[0]}|${p.window[1]}`, { unit: p.unit, window: p.window });
  }
  return [...out.values()].sort((a, b) => a.unit.localeCompare(b.unit) || a.window[0] - b.window[0]);
}
