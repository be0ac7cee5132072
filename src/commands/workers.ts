/**
 * `run --workers N`: the run starts N shard processes of itself (this CLI, the same arguments,
 * `--shard i/N`), each exporting its share of every unit's windows (src/run/shard.ts), and merges
 * their reports into one (src/run/merge-reports.ts): one summary, one report file, one exit code.
 * A run that is itself shard k of K (a pod of an indexed job) starts shards k*N+i of K*N, so every
 * pod uses its cores. The request budget (requests_per_second) is divided between the workers.
 * The run holds its own shard's shared lease entry (the whole job's, 0/1, when not sharded) from
 * before the first worker starts until its report is written, so maintenance and a run of the whole
 * job wait for it (src/state/job-lease.ts). Each worker ends with this process: it watches its IPC
 * channel, which closes however this process ends (src/commands/end-with-parent.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { describeError, ExitCode, worstExitCode } from '../errors.js';
import type { Logger } from '../log.js';
import { mergeWorkerReports, type WorkerOutcome } from '../run/merge-reports.js';
import type { RunReport } from '../run/report.js';
import { lastRunName } from '../run/run-context.js';
import { commitTablesAfterWorkers } from '../run/iceberg-commits.js';
import { shardLabel, type Shard } from '../run/shard.js';
import { MIN_REQUESTS_PER_SECOND } from '../settings/settings.js';
import { newRunId } from '../state/run-id.js';
import { openStore } from '../store/open-store.js';
import { WindowState } from '../state/window-state.js';
import { acquireJobLease, WHOLE_JOB_SHARD } from '../state/job-lease.js';
import type { Lease } from '../state/lease.js';
import type { ObjectStore } from '../store/store.js';
import type { JobContext } from './options.js';
import { jobStreams } from '../plan/streams.js';

/** Flags of the parent's command line that each worker is given its own value of. */
const OWN_FLAGS = ['--workers', '--shard', '--requests-per-second', '--worker-of'];
const OWN_SWITCHES = ['--json', '--no-json'];

/** The shards of N workers of a run that is itself `shard` (null: the whole job). */
export function workerShards(count: number, shard: Shard | null): Shard[] {
  const outer = shard ?? { index: 0, count: 1 };
  return Array.from({ length: count }, (_, i) => ({ index: outer.index * count + i, count: outer.count * count }));
}

/**
 * A worker's command line: the parent's (`argv`, from the command on) without the other job files
 * and the flags each worker gets its own value of, then `--shard`, `--workers 1`, `--json`, its
 * share of the request budget, and `--worker-of` the parent's run (which commits the job's tables).
 */
export function workerArgv(
  argv: readonly string[],
  file: string,
  otherFiles: readonly string[],
  shard: Shard,
  requestsPerSecond: number | null,
  parentRunId: string,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (OWN_FLAGS.includes(a)) {
      i++;
      continue;
    }
    if (OWN_FLAGS.some((f) => a.startsWith(`${f}=`)) || OWN_SWITCHES.includes(a) || (a !== file && otherFiles.includes(a))) continue;
    out.push(a);
  }
  out.push('--shard', shardLabel(shard), '--workers', '1', '--json');
  if (requestsPerSecond !== null) out.push('--requests-per-second', String(requestsPerSecond));
  out.push('--worker-of', parentRunId);
  return out;
}

export interface WorkersInput {
  file: string;
  ctx: JobContext;
  /** The command line from the command on (`run ...`). */
  argv: readonly string[];
  otherFiles: readonly string[];
  count: number;
  shard: Shard | null;
  /** --dry-run: the workers write nothing, and this run takes no lease. */
  dryRun: boolean;
}

/** Runs the workers, and returns the merged report (written beside the state as the run's report) and exit code. */
export async function runWorkers(w: WorkersInput): Promise<{ report: RunReport; exitCode: number }> {
  const { ctx } = w;
  const started = Date.now();
  const runId = newRunId();
  const held = w.dryRun ? null : await holdParentLease(ctx, runId, w);
  try {
    return await superviseWorkers(w, runId, started, held?.lease ?? null);
  } finally {
    await held?.lease.release();
    await held?.store.close?.();
  }
}

/** This run's shared lease entry: its own shard's, or the whole job's (0/1) for the workers to be shards of. */
async function holdParentLease(ctx: JobContext, runId: string, w: WorkersInput): Promise<{ lease: Lease; store: ObjectStore } | null> {
  const destination = ctx.config.output.destination;
  if (!destination) return null; // each worker says what is missing
  const store = await openStore(destination, { s3: ctx.config.s3, logger: ctx.logger });
  try {
    const shard = w.shard ?? WHOLE_JOB_SHARD;
    const lease = await acquireJobLease(store, ctx.job.name, { runId, shard, command: `run --workers ${w.count}`, logger: ctx.logger });
    return { lease, store };
  } catch (err) {
    await store.close?.();
    throw err;
  }
}

async function superviseWorkers(
  w: WorkersInput,
  runId: string,
  started: number,
  lease: Lease | null,
): Promise<{ report: RunReport; exitCode: number }> {
  const { ctx } = w;
  const rps = ctx.config.concurrency.requestsPerSecond;
  const share = rps > 0 ? Math.max(MIN_REQUESTS_PER_SECOND, rps / w.count) : null;
  const shards = workerShards(w.count, w.shard);
  ctx.logger.info({ job: ctx.job.name, workers: w.count, shards: shards.map(shardLabel) }, 'starting the workers');
  // SIGINT and SIGTERM go to every worker, each time: a worker stops cleanly on the first and at once on the second.
  const children = new Set<ChildProcess>();
  const forward = (signal: NodeJS.Signals) => {
    ctx.logger.warn({ signal, workers: children.size }, 'passing the signal on to the workers');
    for (const child of children) child.kill(signal);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  let workers: WorkerOutcome[];
  try {
    workers = await Promise.all(
      shards.map((s) => runWorker(s, workerArgv(w.argv, w.file, w.otherFiles, s, share, runId), children, ctx.logger)),
    );
  } finally {
    process.off('SIGINT', forward);
    process.off('SIGTERM', forward);
  }
  const destination = ctx.config.output.destination;
  const merged = mergeWorkerReports({
    job: ctx.job.name,
    runId,
    started,
    destination: workers.find((x) => x.report)?.report?.destination ?? destination?.url ?? '',
    unitsTotal: jobStreams(ctx.job).length,
    shard: w.shard ? shardLabel(w.shard) : null,
    workers,
  });
  if (ctx.config.output.format === 'iceberg' && !merged.report.dry_run) await commitTables(ctx, runId, merged, lease);
  if (destination && !merged.report.dry_run) {
    const store = await openStore(destination, { s3: ctx.config.s3, logger: ctx.logger });
    try {
      merged.report.report_key = await new WindowState(store, ctx.job.name).writeReport(runId, merged.report, lastRunName(w.shard));
    } catch (err) {
      merged.report.report_error = (err as Error).message;
      if (merged.exitCode === ExitCode.ok) merged.exitCode = ExitCode.failed;
      merged.report.status = merged.report.status === 'succeeded' ? 'failed' : merged.report.status;
    } finally {
      await store.close?.();
    }
  }
  return merged;
}

/**
 * An Iceberg destination: the job's tables committed once, now that every worker has ended (even
 * those that failed: what they committed to the state is whole). A commit that fails makes the run
 * fail with its exit code (75: another writer won every attempt).
 */
async function commitTables(
  ctx: JobContext,
  runId: string,
  merged: { report: RunReport; exitCode: number },
  lease: Lease | null,
): Promise<void> {
  try {
    lease?.assertHeld();
    merged.report.iceberg_commits = await commitTablesAfterWorkers(ctx, runId);
  } catch (err) {
    const { text, exitCode } = describeError(err);
    ctx.logger.error({ err: text }, 'Iceberg tables not committed after the workers; the next run commits them');
    merged.report.error = text.replace(/^error: /, '');
    merged.exitCode = worstExitCode([merged.exitCode, exitCode]);
    if (merged.report.status === 'succeeded') merged.report.status = 'failed';
  }
}

/** How much of a worker's log output is kept to say why it printed no report. */
const STDERR_KEPT = 4000;

function runWorker(shard: Shard, args: string[], children: Set<ChildProcess>, logger: Logger): Promise<WorkerOutcome> {
  return new Promise((resolve) => {
    // Its own process group: a terminal's Ctrl-C reaches it once, through this run, not twice.
    // The IPC channel carries no message: the worker watches it to end with this process.
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...args], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      detached: true,
    });
    children.add(child);
    let stdout = '';
    let tail = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    // Its log lines go to this process's standard error as they come, whole lines at a time.
    let partial = '';
    child.stderr!.on('data', (d: Buffer) => {
      const text = partial + d.toString('utf8');
      const end = text.lastIndexOf('\n') + 1;
      if (end > 0) process.stderr.write(text.slice(0, end));
      partial = text.slice(end);
      tail = (tail + d.toString('utf8')).slice(-STDERR_KEPT);
    });
    const label = shardLabel(shard);
    child.on('error', (err) => {
      children.delete(child);
      resolve({ index: shard.index, shard: label, exit_code: ExitCode.failed, report: null, error: `not started: ${err.message}` });
    });
    child.on('close', (code, killedBy) => {
      children.delete(child);
      if (partial) process.stderr.write(`${partial}\n`);
      const report = parseReport(stdout);
      const exit = code ?? (killedBy === 'SIGINT' || killedBy === 'SIGTERM' ? ExitCode.interrupted : ExitCode.failed);
      if (exit !== ExitCode.ok)
        logger.warn({ shard: label, exit_code: exit, signal: killedBy ?? undefined }, 'worker ended unsuccessfully');
      resolve({
        index: shard.index,
        shard: label,
        exit_code: exit,
        report,
        ...(report ? {} : { error: killedBy ? `ended by ${killedBy}` : lastLine(tail) || `exit ${exit} without a report` }),
      });
    });
  });
}

function parseReport(stdout: string): RunReport | null {
  try {
    const parsed = JSON.parse(stdout) as RunReport;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.run_id === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

const lastLine = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .at(-1) ?? '';
