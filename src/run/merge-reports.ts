/**
 * `run --workers N`: the reports of the N shard processes of one run merged into the run's one
 * report: figures added up, lists joined, one status and one exit code (the most severe of the
 * workers'), and each worker's own line (shard, run id, status, windows, rows, expected rows).
 */
import { ExitCode, worstExitCode } from '../errors.js';
import { REJECT_REASONS } from '../source/paginator.js';
import { allBadAnswerReasons, BAD_ANSWER_REASONS } from '../source/bad-answers.js';
import { mergeDecodeStatus } from './decode-report.js';
import { FILES_LISTED, type ChainFigures, type RunFigures, type RunReport, type WorkerLine } from './report.js';
import type { SettleReport } from './settle.js';
import type { StopSummary } from './graceful-stop.js';

/** What became of one worker: its exit code and, when it printed one, its report. */
export interface WorkerOutcome {
  /** The worker's shard: index, and "i/N". */
  index: number;
  shard: string;
  exit_code: number;
  report: RunReport | null;
  /** Why there is no report (the worker's last error line, or the signal that ended it). */
  error?: string;
}

export interface MergeInput {
  job: string;
  runId: string;
  started: number;
  destination: string;
  /** Unit streams of the job (every worker sees only those it exports or leads). */
  unitsTotal: number;
  /** "k/K" when the run is itself a shard (a pod of an indexed job), whose workers divide its share. */
  shard: string | null;
  workers: WorkerOutcome[];
}

export function mergeWorkerReports(m: MergeInput): { report: RunReport; exitCode: number } {
  const exitCode = worstExitCode(m.workers.map((w) => w.exit_code));
  const reports = m.workers.flatMap((w) => (w.report ? [w.report] : []));
  const sum = (f: (r: RunReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  const finished = Date.now();
  const files = reports
    .flatMap((r) => r.files_written ?? [])
    .sort((a, b) => (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : a.window[0] - b.window[0]));
  const omitted = sum((r) => r.files_written_omitted ?? 0) + Math.max(0, files.length - FILES_LISTED);
  const errors = m.workers.flatMap((w) => {
    const error = w.report?.error ?? w.error;
    return error === undefined ? [] : [`worker ${w.shard}: ${error.split('\n')[0]}`];
  });
  const dryRun = reports.some((r) => r.dry_run);
  const report: RunReport = {
    job: m.job,
    run_id: m.runId,
    status: exitCode === ExitCode.ok ? 'succeeded' : exitCode === ExitCode.interrupted ? 'interrupted' : 'failed',
    ...(dryRun ? { dry_run: true, would_export: reports.flatMap((r) => r.would_export ?? []) } : {}),
    started_at: new Date(m.started).toISOString(),
    finished_at: new Date(finished).toISOString(),
    duration_s: Math.round((finished - m.started) / 10) / 100,
    destination: m.destination,
    windows: {
      planned: sum((r) => r.windows.planned),
      done: sum((r) => r.windows.done),
      failed: sum((r) => r.windows.failed),
      abandoned: sum((r) => r.windows.abandoned),
    },
    // A complete unit has no window to export: only its lead counts it.
    units_skipped: sum((r) => r.units_skipped),
    units_pending: sum((r) => r.units_pending ?? 0),
    units_total: m.unitsTotal,
    rows: sum((r) => r.rows),
    files: sum((r) => r.files),
    bytes: sum((r) => r.bytes),
    requests: sum((r) => r.requests),
    retries: sum((r) => r.retries),
    store_retries: sum((r) => r.store_retries),
    responses_429: sum((r) => r.responses_429),
    rows_rejected: Object.fromEntries(REJECT_REASONS.map((k) => [k, sum((r) => r.rows_rejected[k] ?? 0)])) as RunReport['rows_rejected'],
    bad_answers: allBadAnswerReasons(Object.fromEntries(BAD_ANSWER_REASONS.map((k) => [k, sum((r) => r.bad_answers?.[k] ?? 0)]))),
    failed: reports.flatMap((r) => r.failed),
    warnings: reports.flatMap((r) => r.warnings),
    ...mergeDecodeStatus(reports),
    shard: m.shard,
    range_clamped: firstPerKey(
      reports.flatMap((r) => r.range_clamped),
      (c) => c.chain_id,
    ),
    service_heads: firstPerKey(
      reports.flatMap((r) => r.service_heads ?? []).sort((a, b) => (b.block ?? 0) - (a.block ?? 0)),
      (h) => h.chain_id,
    ).sort((a, b) => a.chain_id - b.chain_id),
    reorgs: reports.flatMap((r) => r.reorgs ?? []),
    windows_reexported: sum((r) => r.windows_reexported ?? 0),
    ...mergeSettle(reports),
    ...(sum((r) => r.windows_resumed ?? 0) > 0 ? { windows_resumed: sum((r) => r.windows_resumed ?? 0) } : {}),
    by_dataset: addFigures(reports.map((r) => r.by_dataset)),
    by_chain: addFigures(reports.map((r) => r.by_chain)) as Record<string, ChainFigures>,
    empty_units: emptyStreams(reports),
    files_written: files.slice(0, FILES_LISTED),
    ...(omitted > 0 ? { files_written_omitted: omitted } : {}),
    shards: m.workers.map((w) => ({
      shard: w.index,
      windows: w.report?.windows.planned ?? 0,
      expected_rows: w.report?.shards?.find((s) => s.shard === w.index)?.expected_rows ?? null,
    })),
    workers: m.workers.map(workerLine),
    ...mergedStop(reports),
    ...removedStreams(reports),
    ...(errors.length > 0 ? { error: errors.join('\n') } : {}),
  };
  return { report, exitCode };
}

function workerLine(w: WorkerOutcome): WorkerLine {
  const r = w.report;
  return {
    shard: w.shard,
    exit_code: w.exit_code,
    run_id: r?.run_id ?? null,
    status: r?.status ?? null,
    windows: r?.windows.planned ?? 0,
    rows: r?.rows ?? 0,
    duration_s: r?.duration_s ?? null,
    report_key: r?.report_key ?? null,
  };
}

function firstPerKey<T>(items: T[], key: (item: T) => number): T[] {
  const seen = new Map<number, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

/** Figures by dataset or chain added up over the workers (requests too: a worker's requests are its own). */
function addFigures(all: Record<string, RunFigures | ChainFigures>[]): Record<string, RunFigures> {
  const out = new Map<string, RunFigures & Partial<Pick<ChainFigures, 'requests' | 'retries'>>>();
  for (const byKey of all) {
    for (const [key, f] of Object.entries(byKey)) {
      const g = out.get(key) ?? {
        windows: { planned: 0, done: 0, failed: 0, abandoned: 0 },
        rows: 0,
        files: 0,
        bytes: 0,
        rows_rejected: {},
      };
      for (const s of ['planned', 'done', 'failed', 'abandoned'] as const) g.windows[s] += f.windows[s];
      g.rows += f.rows;
      g.files += f.files;
      g.bytes += f.bytes;
      for (const [reason, n] of Object.entries(f.rows_rejected) as [keyof RunFigures['rows_rejected'], number][])
        g.rows_rejected[reason] = (g.rows_rejected[reason] ?? 0) + n;
      if ('requests' in f) {
        g.requests = (g.requests ?? 0) + f.requests;
        g.retries = (g.retries ?? 0) + f.retries;
      }
      out.set(key, g);
    }
  }
  const keys = [...out.keys()].sort((a, b) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, out.get(k)!]));
}

/** Units a worker found without rows that no other worker wrote rows of (as far as the listed files say). */
function emptyStreams(reports: RunReport[]): string[] {
  if (reports.some((r) => (r.files_written_omitted ?? 0) > 0)) return [];
  const written = new Set(reports.flatMap((r) => (r.files_written ?? []).filter((f) => f.rows > 0).map((f) => f.unit)));
  return [...new Set(reports.flatMap((r) => r.empty_units ?? []))].filter((u) => !written.has(u)).sort();
}

/** The workers' settle figures added up (each recounted the windows it owns); the first error, the worst exit code. */
function mergeSettle(reports: RunReport[]): Pick<RunReport, 'settle'> {
  const all = reports.flatMap((r) => (r.settle ? [r.settle] : []));
  if (all.length === 0) return {};
  const add = (k: 'recounted' | 'waiting' | 'settled' | 'reexported' | 'pending' | 'not_provable' | 'requests') =>
    all.reduce((n, s) => n + s[k], 0);
  const failed = all.filter((s) => s.error !== undefined);
  const settle: SettleReport = {
    horizon_s: all[0]!.horizon_s,
    recounted: add('recounted'),
    waiting: add('waiting'),
    settled: add('settled'),
    reexported: add('reexported'),
    pending: add('pending'),
    not_provable: add('not_provable'),
    requests: add('requests'),
    differed: all.flatMap((s) => s.differed),
    ...(failed.length > 0 ? { error: failed[0]!.error!, exit_code: Math.max(...failed.map((s) => s.exit_code ?? 1)) } : {}),
    ...(all.some((s) => s.would_recount)
      ? { would_recount: all.flatMap((s) => s.would_recount ?? []), would_request: all.reduce((n, s) => n + (s.would_request ?? 0), 0) }
      : {}),
  };
  return { settle };
}

/** The streams no longer in the job, as every worker found them at the destination (each once). */
function removedStreams(reports: RunReport[]): Pick<RunReport, 'removed_streams'> {
  const notes = reports.flatMap((r) => (r.removed_streams ? [r.removed_streams] : []));
  if (notes.length === 0) return {};
  const byUnit = new Map<string, number>();
  for (const s of notes.flatMap((n) => n.streams)) byUnit.set(s.unit, Math.max(byUnit.get(s.unit) ?? 0, s.windows));
  const streams = [...byUnit].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([unit, windows]) => ({ unit, windows }));
  return { removed_streams: { streams, next: notes[0]!.next } };
}

/** The workers' stops as one: what they kept and abandoned added up, the latest deadline. */
function mergedStop(reports: RunReport[]): Pick<RunReport, 'stop'> {
  const stops = reports.flatMap((r) => (r.stop ? [r.stop] : []));
  if (stops.length === 0) return {};
  const sum = (f: (s: StopSummary) => number) => stops.reduce((n, s) => n + f(s), 0);
  return {
    stop: {
      signal: stops[0]!.signal,
      grace_s: stops[0]!.grace_s,
      deadline: stops
        .map((s) => s.deadline)
        .sort()
        .at(-1)!,
      grace_expired: stops.some((s) => s.grace_expired),
      windows_committed: sum((s) => s.windows_committed),
      windows_cut: sum((s) => s.windows_cut),
      // Every worker's abandoned windows, those of a worker stopped with no stop of its own included.
      windows_abandoned: reports.reduce((n, r) => n + r.windows.abandoned, 0),
      rows_committed: sum((s) => s.rows_committed),
    },
  };
}
