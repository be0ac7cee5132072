import { ExitCode, worstExitCode } from '../errors.js';
import type { Job } from '../job/schema.js';
import type { Plan, ShardLoad } from '../plan/index.js';
import { parseStreamKey } from '../plan/stream-key.js';
import type { ClientStats, InsightClient } from '../source/client.js';
import type { WindowOutcome } from './export-windows.js';
import type { ReorgFound } from '../state/reorg-check.js';
import type { ServiceHead } from './chains.js';
import { addRejected, REJECT_REASONS, type RejectReason } from '../source/paginator.js';
import type { TableCommitted } from '../iceberg/index.js';
import type { SettleReport } from './settle.js';
import type { StopSummary } from './graceful-stop.js';
import type { UnreferencedFound } from './unreferenced-check.js';
import type { RemovedStreamsNote } from '../state/removed-streams.js';
import { allBadAnswerReasons, type BadAnswerReason } from '../source/bad-answers.js';
import { decodeReport, type DecodeStatusByTable } from './decode-report.js';

/** The run report, written as JSON beside the state (`_state/<job>/reports/<run>.json`). */
export interface RunReport {
  job: string;
  run_id: string;
  status: 'succeeded' | 'failed' | 'interrupted';
  /** `run --dry-run`: everything was checked and planned, nothing exported nor written. */
  dry_run?: boolean;
  /** With dry_run: the windows a run would export (unit key, [start, end)). */
  would_export?: { unit: string; window: [number, number] }[];
  started_at: string;
  finished_at: string;
  duration_s: number;
  destination: string;
  windows: { planned: number; done: number; failed: number; abandoned: number };
  /** Streams (dataset x target x chain) whose whole range was already exported (none of it pending). */
  units_skipped: number;
  /** Streams with windows the service does not serve yet (a fixed `to` past its head minus the safety lag, see range_clamped): later runs export them. */
  units_pending?: number;
  units_total: number;
  rows: number;
  files: number;
  bytes: number;
  requests: number;
  /** Retried requests to the service (the read interface). */
  retries: number;
  /** Retried requests to the destination's store (S3: the SDK's retries and the store's own; 0 for a local folder). */
  store_retries: number;
  responses_429: number;
  /**
   * Rows the service sent that were not written, by reason: of a chain not asked for
   * (other_chain), outside the block range asked for (outside_slice), of another wallet
   * (other_wallet), contract (other_contract) or event (other_event). Every reason is listed.
   */
  rows_rejected: Record<RejectReason, number>;
  /**
   * Answers of the service that proved nothing and were asked again, by reason (see
   * src/source/bad-answers.ts): rows outside the slice, implausible rows, rows of another branch,
   * fewer rows than an earlier answer showed, a full page cut by one row (cut again, not asked
   * again), an edge block missing that the service served blocks around. Every reason is listed.
   */
  bad_answers?: Record<BadAnswerReason, number>;
  /** Windows that failed, each with the exit code its error means (2: no retry cures it; 1: a later run may). */
  failed: { unit: string; window: [number, number]; error: string; exit_code: number }[];
  /**
   * What exported windows found amiss (their rows are written): e.g. NFT collections the explorer
   * listed incompletely, rows that failed to decode (one per stream, src/run/decode-report.ts).
   */
  warnings: { unit: string; window: [number, number]; warning: string }[];
  /**
   * Per table of a dataset that decodes: the rows this run wrote by decode status and reason
   * ('ok', 'no_calldata', 'no_abi', 'error: <reason>'); they add up to the table's rows.
   */
  decode_status?: DecodeStatusByTable;
  /**
   * Data files of the job that no state names, found by this run (its job's state was empty, or
   * --repair checked the destination): readers see their rows beside the state's. `remove` is the
   * command that removes them (src/run/unreferenced-check.ts).
   */
  unreferenced_files?: UnreferencedFound;
  /** Streams the job no longer has (a target or chain taken out) whose windows are still at the destination, and what to do. */
  removed_streams?: RemovedStreamsNote;
  /** `output.format: iceberg`: the tables this run's end committed (their new snapshot and metadata file). */
  iceberg_commits?: TableCommitted[];
  /** "i/N" when this run exported one shard of the job (--shard, indexed/array jobs), else null. */
  shard: string | null;
  /**
   * A sharded run: what each shard exports of the job's plan as this shard saw it (windows, and
   * expected rows when this run read its units' densities: when the split grew), from the split
   * the shards share. `run --workers` gives the merged run's own plan per shard.
   */
  shards?: ShardLoad[];
  /** `run --workers N`: each worker (a shard process of this run) and what it did; its own report is at `report_key`. */
  workers?: WorkerLine[];
  /**
   * Chains whose fixed range.to lies past the head minus the safety lag: this run exported up to
   * `end` (exclusive) only, like `to: latest`; later runs export the rest.
   */
  range_clamped: RangeClamped[];
  /**
   * Per chain, the newest block the service was seen to serve: its head (`exact`), or the block that
   * proved the job's range served; and how far it is behind the clock (shown, never used to decide).
   */
  service_heads?: ServiceHead[];
  /** Reorganisations this run found under completed windows (one per unit), and the windows it exported again for them. */
  reorgs?: ReorgFound[];
  windows_reexported?: number;
  /** Windows of earlier runs recounted to settle them (src/run/settle.ts); absent with --force. */
  settle?: SettleReport;
  /** Completed windows of replacements an earlier run began and did not finish (stopped, killed), exported again by this run. */
  windows_resumed?: number;
  /** The windows of this run by dataset (transactions, events ...). */
  by_dataset: Record<string, RunFigures>;
  /**
   * The windows of this run by chain id, with the requests (attempts, as `requests`) and retries
   * that named the chain: a request for several chains counts for each of them, so the chains'
   * requests add up to more than `requests` when chains share requests.
   */
  by_chain: Record<string, ChainFigures>;
  /**
   * Unit streams that have no row at all: every window of this run was done and empty, and no
   * earlier window exists. Often a wrong address, signature, filter or range: the run says so.
   */
  empty_units?: string[];
  /**
   * The files this run wrote, for loading them into a warehouse: key (relative to `destination`),
   * rows, bytes, and the unit and window they belong to; in unit and window order. At most
   * FILES_LISTED are listed; `files_written_omitted` counts the rest (each window's record in the
   * state, `_state/<job>/segments/<unit>/`, lists every file of the window).
   */
  files_written?: WrittenFile[];
  files_written_omitted?: number;
  report_key?: string;
  /** A stopped run (SIGINT, SIGTERM): what it committed during the stop and what it abandoned (src/run/graceful-stop.ts). */
  stop?: StopSummary;
  /**
   * Why the run ended before its windows' outcomes (a failure before or around its plan: the service
   * down during the head search, a refused destination ...); the run's exit code is that error's.
   */
  error?: string;
  /** Why the report could not be written to the destination (it is then only printed); status is then at best "failed". */
  report_error?: string;
}

/** One worker of `run --workers N`. */
export interface WorkerLine {
  /** "i/N". */
  shard: string;
  exit_code: number;
  /** Null when the worker printed no report (it failed before its run, or was killed). */
  run_id: string | null;
  status: RunReport['status'] | null;
  /** Windows it planned, and rows it wrote. */
  windows: number;
  rows: number;
  duration_s: number | null;
  report_key: string | null;
}

/** A chain whose range this run ended before `to`: what the service serves ends at `end` (exclusive). */
export interface RangeClamped {
  chain_id: number;
  to: number;
  end: number;
  /** How far the exportable end lags `to`, in the range's unit: blocks (range by block) or seconds (by time). */
  lag: number;
  lag_unit: 'blocks' | 'seconds';
}

/** A file a run wrote. */
export interface WrittenFile {
  key: string;
  rows: number;
  bytes: number;
  unit: string;
  window: [number, number];
}

/** Files listed by name in a run report; a bigger run lists these and counts the others. */
export const FILES_LISTED = 1000;

/** What the windows of one dataset or one chain did in a run. */
export interface RunFigures {
  windows: { planned: number; done: number; failed: number; abandoned: number };
  rows: number;
  files: number;
  bytes: number;
  /** As RunReport.rows_rejected, the reasons that occurred only (a row of a chain not asked for counts under the first chain its request asked for). */
  rows_rejected: Partial<Record<RejectReason, number>>;
}

/** What the windows of one chain did in a run, and the requests that named it. */
export interface ChainFigures extends RunFigures {
  requests: number;
  retries: number;
}

export interface ReportInput {
  job: Job;
  runId: string;
  started: number;
  plan: Plan;
  outcomes: WindowOutcome[];
  destination: string;
  client: InsightClient;
  /** The destination's retry count (ObjectStore.stats), when it keeps one. */
  storeStats?: { retries: number } | undefined;
  interrupted: boolean;
  /** "i/N" when the run exported one shard. */
  shard?: string | null;
  reorgs?: ReorgFound[];
  serviceHeads?: ServiceHead[];
  settle?: SettleReport;
}

export function buildReport(r: ReportInput): RunReport {
  const decode = decodeReport(r.outcomes);
  const count = (s: WindowOutcome['status']) => r.outcomes.filter((o) => o.status === s).length;
  const failed = r.outcomes.filter((o) => o.status === 'failed');
  const abandoned = count('abandoned');
  const finished = Date.now();
  const stats = r.client.stats;
  // A recount that failed leaves windows unproven: the run did not succeed (its exit code is the error's).
  const settleFailed = r.settle?.error !== undefined;
  return {
    job: r.job.name,
    run_id: r.runId,
    status: r.interrupted || abandoned > 0 ? 'interrupted' : failed.length > 0 || settleFailed ? 'failed' : 'succeeded',
    started_at: new Date(r.started).toISOString(),
    finished_at: new Date(finished).toISOString(),
    duration_s: Math.round((finished - r.started) / 10) / 100,
    destination: r.destination,
    windows: { planned: r.plan.units.length, done: count('done'), failed: failed.length, abandoned },
    units_skipped: r.plan.coverage.filter((c) => c.todo.length === 0 && c.done.length > 0 && c.pending.length === 0).length,
    units_pending: r.plan.coverage.filter((c) => c.pending.length > 0).length,
    units_total: r.plan.coverage.length,
    rows: sum(r.outcomes, 'rows'),
    files: sum(r.outcomes, 'files'),
    bytes: sum(r.outcomes, 'bytes'),
    requests: stats.requests,
    retries: stats.retries,
    store_retries: r.storeStats?.retries ?? 0,
    responses_429: stats.status429,
    rows_rejected: rowsRejected(r.outcomes),
    bad_answers: allBadAnswerReasons(stats.badAnswers ?? {}),
    failed: failed.map((o) => ({
      unit: o.unitKey,
      window: [o.start, o.end],
      error: o.error ?? 'unknown',
      exit_code: o.exitCode ?? ExitCode.failed,
    })),
    warnings: [
      ...r.outcomes.flatMap((o) =>
        (o.warnings ?? []).map((warning) => ({ unit: o.unitKey, window: [o.start, o.end] as [number, number], warning })),
      ),
      ...decode.warnings,
    ],
    ...(decode.decode_status ? { decode_status: decode.decode_status } : {}),
    shard: r.shard ?? null,
    range_clamped: (r.plan.clamped ?? []).map((c) => ({
      chain_id: c.chainId,
      to: c.to,
      end: c.end,
      lag: c.to - c.end,
      lag_unit: r.plan.axis === 'block' ? 'blocks' : 'seconds',
    })),
    service_heads: r.serviceHeads ?? [],
    reorgs: r.reorgs ?? [],
    windows_reexported: (r.reorgs ?? []).reduce((n, x) => n + x.windows.length, 0),
    ...(r.settle ? { settle: r.settle } : {}),
    by_dataset: figuresBy(r.plan, r.outcomes, (unitKey) => parseStreamKey(unitKey)!.dataset),
    by_chain: withChainRequests(
      figuresBy(r.plan, r.outcomes, (_unitKey, chainId) => String(chainId)),
      stats.byChain,
    ),
    empty_units: emptyStreams(r.plan, r.outcomes),
    ...filesWritten(r.outcomes),
  };
}

function filesWritten(outcomes: WindowOutcome[]): Pick<RunReport, 'files_written' | 'files_written_omitted'> {
  const all = [...outcomes]
    .sort((a, b) => (a.unitKey < b.unitKey ? -1 : a.unitKey > b.unitKey ? 1 : a.start - b.start))
    .flatMap((o) =>
      (o.written ?? []).map((f) => ({ ...f, unit: o.unitKey, window: o.committed ?? ([o.start, o.end] as [number, number]) })),
    );
  return all.length > FILES_LISTED
    ? { files_written: all.slice(0, FILES_LISTED), files_written_omitted: all.length - FILES_LISTED }
    : { files_written: all };
}

export interface FailureReportInput {
  job: Job;
  runId: string;
  started: number;
  destination: string;
  /** The client, when the run had opened one (its request figures go into the report). */
  client?: InsightClient | null;
  storeStats?: { retries: number } | undefined;
  interrupted: boolean;
  shard?: string | null;
  error: string;
}

/** The report of a run that ended before any window's outcome: no windows, the error that ended it. */
export function buildFailureReport(r: FailureReportInput): RunReport {
  const finished = Date.now();
  const stats = r.client?.stats;
  const none = { windows: { planned: 0, done: 0, failed: 0, abandoned: 0 }, rows: 0, files: 0, bytes: 0 };
  return {
    job: r.job.name,
    run_id: r.runId,
    status: r.interrupted ? 'interrupted' : 'failed',
    started_at: new Date(r.started).toISOString(),
    finished_at: new Date(finished).toISOString(),
    duration_s: Math.round((finished - r.started) / 10) / 100,
    destination: r.destination,
    ...none,
    units_skipped: 0,
    units_total: 0,
    requests: stats?.requests ?? 0,
    retries: stats?.retries ?? 0,
    store_retries: r.storeStats?.retries ?? 0,
    responses_429: stats?.status429 ?? 0,
    rows_rejected: rowsRejected([]),
    bad_answers: allBadAnswerReasons(stats?.badAnswers ?? {}),
    failed: [],
    warnings: [],
    shard: r.shard ?? null,
    range_clamped: [],
    reorgs: [],
    windows_reexported: 0,
    by_dataset: {},
    by_chain: {},
    error: r.error,
  };
}

/**
 * The exit code of a run that ended with its windows' outcomes: 0 when it succeeded, 130 when
 * interrupted, else the most severe of its failed windows' codes (a permanent cause among them
 * makes it 2: retrying alone cannot complete the run); 1 when only the report could not be written.
 */
export function reportExitCode(report: RunReport): number {
  if (report.status === 'succeeded') return ExitCode.ok;
  if (report.status === 'interrupted') return ExitCode.interrupted;
  return Math.max(
    ExitCode.failed,
    worstExitCode([...report.failed.map((f) => f.exit_code), ...(report.settle?.exit_code === undefined ? [] : [report.settle.exit_code])]),
  );
}

const FAILURE_REPORT = Symbol('insight-export failure report');

/** Attaches the report of the run an error ended, for the caller (metrics, --json). */
export function attachFailureReport(err: unknown, report: RunReport): void {
  if (typeof err === 'object' && err !== null) Object.defineProperty(err, FAILURE_REPORT, { value: report, enumerable: false });
}

/** The report of the run that `err` ended, if runJob attached one. */
export function failureReportOf(err: unknown): RunReport | undefined {
  return typeof err === 'object' && err !== null ? (err as { [FAILURE_REPORT]?: RunReport })[FAILURE_REPORT] : undefined;
}

function emptyStreams(plan: Plan, outcomes: WindowOutcome[]): string[] {
  const rows = new Map<string, number>();
  for (const o of outcomes) rows.set(o.unitKey, (rows.get(o.unitKey) ?? 0) + (o.status === 'done' ? o.rows : Number.NaN));
  return plan.coverage.filter((c) => c.done.length === 0 && c.todo.length > 0 && rows.get(c.unitKey) === 0).map((c) => c.unitKey);
}

/** Planned windows and outcomes grouped by a key; groups in key order (chains numerically). */
function figuresBy(plan: Plan, outcomes: WindowOutcome[], keyOf: (unitKey: string, chainId: number) => string): Record<string, RunFigures> {
  const groups = new Map<string, RunFigures>();
  const group = (key: string): RunFigures => {
    let g = groups.get(key);
    if (!g)
      groups.set(key, (g = { windows: { planned: 0, done: 0, failed: 0, abandoned: 0 }, rows: 0, files: 0, bytes: 0, rows_rejected: {} }));
    return g;
  };
  for (const u of plan.units) group(keyOf(u.unitKey, u.chainId)).windows.planned++;
  for (const o of outcomes) {
    const g = group(keyOf(o.unitKey, o.chainId));
    g.windows[o.status]++;
    g.rows += o.rows;
    g.files += o.files;
    g.bytes += o.bytes;
    if (o.rejected) addRejected(g.rows_rejected, o.rejected);
  }
  const keys = [...groups.keys()].sort((a, b) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, groups.get(k)!]));
}

/** Adds to each planned chain's figures the requests and retries that named it. */
function withChainRequests(byChain: Record<string, RunFigures>, requests: ClientStats['byChain']): Record<string, ChainFigures> {
  const out: Record<string, ChainFigures> = {};
  for (const [chain, figures] of Object.entries(byChain))
    out[chain] = { ...figures, ...(requests.get(Number(chain)) ?? { requests: 0, retries: 0 }) };
  return out;
}

function rowsRejected(outcomes: WindowOutcome[]): Record<RejectReason, number> {
  const all: Partial<Record<RejectReason, number>> = {};
  for (const o of outcomes) if (o.rejected) addRejected(all, o.rejected);
  return Object.fromEntries(REJECT_REASONS.map((reason) => [reason, all[reason] ?? 0])) as Record<RejectReason, number>;
}

function sum(outcomes: WindowOutcome[], field: 'rows' | 'files' | 'bytes'): number {
  return outcomes.reduce((n, o) => n + o[field], 0);
}
