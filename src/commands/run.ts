import type { Argv, CommandModule } from 'yargs';
import { describeError, ExitCode, worstExitCode } from '../errors.js';
import { runJob } from '../run/run-job.js';
import { failureReportOf, reportExitCode, type RunReport } from '../run/report.js';
import { parsePushgatewayUrl, pushMetrics, type PushTarget } from '../run/metrics.js';
import { resolveShard, type Shard } from '../run/shard.js';
import { parseRewind, type Rewind } from '../state/rewind.js';
import { withSettingFlags } from '../config/flags.js';
import { SETTINGS } from '../settings/settings.js';
import { formatDuration } from '../settings/values.js';
import type { RangeOverride } from '../job/load.js';
import { givenJobFlags, loadJobContext, withConfigFlags, type ConfigArgs, type JobContext } from './options.js';
import { CommandArgumentError } from './source-options.js';
import { removedStreamsLines } from './removed-streams-lines.js';
import { ProgressLine } from './progress.js';
import { workerCount } from './worker-count.js';
import { decodeSummaryLines } from '../run/decode-report.js';
import { runWorkers } from './workers.js';
import { endWithParent } from './end-with-parent.js';
import { emptyStreamsLine } from '../run/empty-streams.js';

interface RunArgs extends ConfigArgs {
  jobs: string[];
  'dry-run': boolean;
  from?: string | undefined;
  to?: string | undefined;
  force: boolean;
  rewind?: string | undefined;
  repair: boolean;
  json: boolean;
  shard?: string | undefined;
  pushgateway?: string | undefined;
  'worker-of'?: string | undefined;
}

/** What became of one job file of a `run`: its report, or the error that stopped it, and its exit code. */
interface JobOutcome {
  job_file: string;
  exit_code: number;
  report?: RunReport;
  error?: string;
}

/**
 * How long after its grace period (the stop_grace setting) a stopped run may take to abandon what
 * it did not commit and write its report before it exits regardless: 25 s + 4 s stays within
 * Kubernetes' default 30 s before its SIGKILL.
 */
export const STOP_EXIT_MARGIN_MS = 4_000;

/** `argv`: the command line from the command on, which `--workers` gives its workers. */
export function runCommand(
  setExit: (code: number) => void,
  argv: readonly string[] = process.argv.slice(2),
): CommandModule<object, RunArgs> {
  return {
    command: 'run <jobs..>',
    describe:
      "Export what each job asks for and is not exported yet, one job after another; resumes where the last run stopped. Exit code: the most severe of the jobs'",
    builder: (y) => runOptions(y) as never,
    handler: async (args) => {
      if (args['worker-of'] !== undefined) endWithParent();
      // Flags shared by every job are checked once, before anything runs.
      const rewind = args.rewind === undefined ? null : parseRewind(args.rewind);
      const shard = resolveShard(args.shard);
      const pushUrl = args.pushgateway ?? process.env.INSIGHT_EXPORT_PUSHGATEWAY_URL;
      const pushTarget = pushUrl
        ? parsePushgatewayUrl(pushUrl, args.pushgateway ? '--pushgateway' : 'INSIGHT_EXPORT_PUSHGATEWAY_URL')
        : null;
      const files = args.jobs.map(String);
      const shared: SharedRunOptions = { args, rewind, shard, pushTarget, argv, files };
      setExit(files.length > 1 ? await runBatch(shared) : await runSingle(files[0]!, shared));
    },
  };
}

/** The flags and examples of `run`, beside the settings' flags. */
function runOptions(y: Argv<object>) {
  return withSettingFlags(withSettingFlags(withConfigFlags(y), 'run'), 'write')
    .positional('jobs', { type: 'string', array: true, demandOption: true, describe: 'Job file(s) (YAML or JSON)' })
    .option('force', { type: 'boolean', default: false, describe: 'Re-export every window of the range, replacing its files' })
    .option('rewind', {
      type: 'string',
      describe:
        'Export the most recent windows of every unit again, replacing their files (reorganisations): blocks ("128") or a duration ("6h") back from the newest exported point',
    })
    .option('repair', {
      type: 'boolean',
      default: false,
      describe:
        'Export again the completed windows whose files are gone, changed, or hold fewer or more rows than the service counts (what verify --recount finds); one count request per window and target',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'Print the run report as JSON on stdout (several job files: an array of {job_file, exit_code, report | error})',
    })
    .option('shard', {
      type: 'string',
      describe:
        'Export shard i of N (0-based "i/N"); default: JOB_COMPLETION_INDEX/JOB_COMPLETION_COUNT or AWS_BATCH_JOB_ARRAY_INDEX/AWS_BATCH_JOB_ARRAY_SIZE when set',
    })
    .option('worker-of', {
      type: 'string',
      hidden: true,
      describe: 'A worker of `run --workers`: the run id of its parent, which commits the Iceberg tables once every worker has ended',
    })
    .option('pushgateway', {
      type: 'string',
      describe: 'Push run metrics to this Prometheus Pushgateway URL (default: INSIGHT_EXPORT_PUSHGATEWAY_URL)',
    })
    .example('$0 run jobs/x.yaml --dry-run', 'Check everything and print what a run would export, writing nothing')
    .example('$0 run jobs/x.yaml --from 2024-03-01 --to 2024-03-08 --force', 'Export one week again, replacing its files')
    .example('$0 run jobs/x.yaml --repair', 'Export again every window verify --recount finds damaged')
    .example('$0 run jobs/x.yaml --shard 2/8', 'One of eight workers of a sharded backfill')
    .example('$0 run jobs/demo.yaml', 'Run the demo job (built-in sandbox -> ./out/parquet)')
    .example('$0 run jobs/a.yaml jobs/b.yaml', 'Two jobs, one after the other (a bad job file is reported and skipped)')
    .example('$0 run jobs/s3-export.yaml --destination s3://my-bucket/insight', 'Export to S3')
    .example('$0 run jobs/x.yaml --format ndjson --requests-per-second 20', 'NDJSON.gz, rate-limited');
}

/** One job file: its report (or the JSON of it) on stdout; its exit code. */
async function runSingle(file: string, shared: SharedRunOptions): Promise<number> {
  const { args } = shared;
  const ctx = await loadJobContext(file, args, ['source', 'destination'], { range: rangeFlags(args) });
  const outcome = await runOne(file, ctx, shared);
  if (outcome.report)
    process.stdout.write(
      args.json
        ? `${JSON.stringify(outcome.report, null, 2)}\n`
        : outcome.report.dry_run
          ? dryRunSummary(outcome.report, file)
          : summary(outcome.report, file),
    );
  return outcome.exit_code;
}

/**
 * Several job files: every one is checked before the first export starts: a bad one is reported
 * at once (file, line, field) and not run; the other jobs still run, one after another. The exit
 * code is the most severe of the jobs'.
 */
async function runBatch(shared: SharedRunOptions): Promise<number> {
  const { args, files } = shared;
  const contexts = new Map<string, JobContext>();
  const outcomes: JobOutcome[] = [];
  for (const file of files) {
    try {
      contexts.set(file, await loadJobContext(file, args, ['source', 'destination'], { range: rangeFlags(args) }));
    } catch (err) {
      outcomes.push(failedJob(file, err));
    }
  }
  for (const file of files) {
    const ctx = contexts.get(file);
    if (!ctx) continue;
    const interrupted = outcomes.some((o) => o.exit_code === ExitCode.interrupted);
    const outcome = interrupted
      ? { job_file: file, exit_code: ExitCode.interrupted, error: 'not run: the batch was interrupted' }
      : await runOne(file, ctx, shared).catch((err: unknown) => failedJob(file, err));
    outcomes.push(outcome);
    if (!args.json && outcome.report)
      process.stdout.write(outcome.report.dry_run ? dryRunSummary(outcome.report, file) : summary(outcome.report, file));
  }
  outcomes.sort((a, b) => files.indexOf(a.job_file) - files.indexOf(b.job_file));
  process.stdout.write(args.json ? `${JSON.stringify(outcomes, null, 2)}\n` : batchSummary(outcomes));
  return worstExitCode(outcomes.map((o) => o.exit_code));
}

/** --from / --to, parsed by their settings (the job's schema then checks them like the file's range). */
function rangeFlags(args: RunArgs): RangeOverride {
  const point = (key: 'range.from' | 'range.to', raw: string | undefined) => {
    if (raw === undefined) return undefined;
    const r = SETTINGS[key].parse(raw);
    if (!r.ok) throw new CommandArgumentError(`--${key.slice(6)} ${r.problem}`, { hint: SETTINGS[key].doc });
    return r.value;
  };
  return { from: point('range.from', args.from), to: point('range.to', args.to) };
}

/** Streams whose range the service does not serve to its end yet: neither complete nor to export now. */
function waiting(r: RunReport): string {
  const n = r.units_pending ?? 0;
  return n > 0 ? `, ${n} waiting for the service to serve the rest of their range (see range_clamped)` : '';
}

function dryRunSummary(r: RunReport, jobFile: string): string {
  const todo = r.would_export ?? [];
  const lines = [
    `dry run: job ${r.job}${r.shard ? ` (shard ${r.shard})` : ''} -> ${r.destination}: nothing written`,
    `  would export ${todo.length} windows; ${r.units_skipped}/${r.units_total} units already complete${waiting(r)}`,
    ...todo.map((w) => `  ${w.unit} [${w.window[0]}, ${w.window[1]})`),
  ];
  const recount = r.settle?.would_recount ?? [];
  if (recount.length > 0 || (r.settle?.waiting ?? 0) > 0)
    lines.push(
      `  would recount ${recount.length} windows of earlier runs not settled (about ${r.settle!.would_request ?? 0} count requests); ${r.settle!.waiting} recounted before wait until older than the settle horizon`,
      ...recount.map((w) => `  recount ${w.unit} [${w.window[0]}, ${w.window[1]})`),
    );
  lines.push(...removedStreamsLines(r.removed_streams, jobFile));
  return `${lines.join('\n')}\n`;
}

interface SharedRunOptions {
  args: RunArgs;
  rewind: Rewind | null;
  shard: Shard | null;
  pushTarget: PushTarget | null;
  /** The command line and its job files, for `--workers`' workers. */
  argv: readonly string[];
  files: readonly string[];
}

/** Runs one loaded job with a progress line and signal handling; failed windows are in its report, not thrown. */
async function runOne(
  file: string,
  ctx: JobContext,
  { args, rewind, shard, pushTarget, argv, files }: SharedRunOptions,
): Promise<JobOutcome> {
  const { count, aboveCores } = workerCount(ctx.config.concurrency.workers);
  if (aboveCores) ctx.logger.warn({ workers: aboveCores.requested, cores: aboveCores.cores }, aboveCores.message);
  if (count > 1) {
    // Each worker pushes its own metrics (under its shard), writes its own report and stops on the signals this run passes on; this run merges them.
    const otherFiles = files.filter((f) => f !== file);
    const { report, exitCode } = await runWorkers({ file, ctx, argv, otherFiles, count, shard, dryRun: args['dry-run'] });
    return { job_file: file, exit_code: exitCode, report };
  }
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      // The run stops paging and commits what it has wholly received within the grace period (src/run/graceful-stop.ts).
      controller.abort(signal);
      // A step that does not stop (a store still retrying, a file system that does not answer)
      // must not keep the process: after the grace period it ends as a crash would, which the
      // commit protocol makes safe (the next run removes what is unfinished and takes the lease over).
      const exitMs = ctx.config.stopGraceMs + STOP_EXIT_MARGIN_MS;
      setTimeout(() => {
        ctx.logger.error({ signal, exit_after_s: exitMs / 1000 }, 'did not stop within the grace period: exiting; run again to resume');
        process.exit(ExitCode.interrupted);
      }, exitMs).unref();
    } else {
      ctx.logger.warn({ signal }, 'second signal: stopping at once; the next run removes what is unfinished');
      process.exit(ExitCode.interrupted);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = new ProgressLine();
  const push = async (report: RunReport) => {
    if (!pushTarget) return;
    await pushMetrics(report, pushTarget).then(
      () => ctx.logger.info({ pushgateway: pushTarget.display }, 'run metrics pushed'),
      (err: Error) => ctx.logger.error({ err: err.message }, 'run metrics not pushed'),
    );
  };
  try {
    let report: RunReport;
    try {
      report = await runJob({
        ...ctx,
        force: args.force,
        dryRun: args['dry-run'],
        rewind,
        repair: args.repair,
        removeCommand: `insight-export remove-orphan-files ${[file, ...givenJobFlags(args)].join(' ')}`,
        shard,
        commitTables: args['worker-of'] === undefined,
        signal: controller.signal,
        onPlan: (plan) => progress.setTotal(plan.units.length),
        onProgress: (e) => progress.on(e),
      });
    } catch (err) {
      // A run that failed before its windows' outcomes still pushes and prints its (failed) report; the error sets the exit code.
      progress.finish();
      const failed = failureReportOf(err);
      if (failed) {
        await push(failed);
        if (args.json && args.jobs.length === 1) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
      }
      throw err;
    }
    progress.finish();
    await push(report);
    return { job_file: file, exit_code: reportExitCode(report), report };
  } finally {
    progress.finish();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** A job of several that could not be loaded or run: its error is printed now, naming the file. */
function failedJob(file: string, err: unknown): JobOutcome {
  const { text, exitCode } = describeError(err);
  const named = text.includes(file) ? text : text.replace(/^(error|internal error \(please report\)): /, `$1: ${file}: `);
  process.stderr.write(`${named}\n`);
  return { job_file: file, exit_code: exitCode, error: text.replace(/^error: /, '').replace(`${file}: `, '') };
}

function batchSummary(outcomes: JobOutcome[]): string {
  const lines = [`${outcomes.length} jobs, exit ${worstExitCode(outcomes.map((o) => o.exit_code))} (the most severe):`];
  for (const o of outcomes) {
    const what = o.report ? `${o.report.status}, ${o.report.rows} rows in ${o.report.files} files` : (o.error ?? '').split('\n')[0];
    lines.push(`  exit ${o.exit_code}  ${o.job_file}: ${what}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Files the summary names; the JSON report lists more (see FILES_LISTED). */
const FILES_SHOWN = 10;

function summary(r: RunReport, jobFile: string): string {
  const lines = [
    `${r.status}: job ${r.job}${r.shard ? ` (shard ${r.shard})` : ''} -> ${r.destination}`,
    `  windows: ${r.windows.done} done, ${r.windows.failed} failed, ${r.windows.abandoned} abandoned of ${r.windows.planned} planned; ${r.units_skipped}/${r.units_total} units already complete${waiting(r)}`,
    ...settleLine(r.settle),
    `  rows: ${r.rows}  files: ${r.files}  bytes: ${r.bytes}  requests: ${r.requests} (${r.retries} retries)  ${r.duration_s}s`,
    r.report_error === undefined
      ? `  report: ${r.report_key ?? '-'}`
      : `  report: NOT WRITTEN to the destination (${r.report_error.split('\n')[0]}); run with --json to keep it`,
  ];
  const shown = (r.files_written ?? []).slice(0, FILES_SHOWN);
  if (shown.length > 0) lines.push(`  files written (key, rows, bytes; keys under ${r.destination}):`);
  for (const f of shown) lines.push(`    ${f.key}  ${f.rows}  ${f.bytes}`);
  const more = r.files - shown.length;
  if (more > 0) lines.push(`    ... and ${more} more (run --json, the run report, or the window records under _state/${r.job}/segments/)`);
  if (r.windows_resumed)
    lines.push(`  finished an interrupted replacement: ${r.windows_resumed} completed windows it had not replaced yet exported again`);
  if (r.stop) lines.push(stopLine(r.stop));
  for (const w of r.workers ?? [])
    lines.push(
      `  worker ${w.shard}: ${w.status ?? 'no report'} (exit ${w.exit_code}), ${w.windows} windows, ${w.rows} rows${w.duration_s === null ? '' : ` in ${w.duration_s}s`}`,
    );
  const bad = Object.entries(r.bad_answers ?? {}).filter(([, n]) => n > 0);
  if (bad.length > 0)
    lines.push(`  answers that proved nothing (asked again or cut again): ${bad.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
  if (r.empty_units?.length) lines.push(`  warning: ${emptyStreamsLine(r.empty_units)}`);
  for (const f of r.failed) lines.push(`  FAILED ${f.unit} [${f.window[0]}, ${f.window[1]}): ${f.error.split('\n')[0]}`);
  lines.push(...decodeSummaryLines(r));
  for (const w of r.warnings) lines.push(`  WARNING ${w.unit}: ${w.warning}`);
  lines.push(...removedStreamsLines(r.removed_streams, jobFile));
  return `${lines.join('\n')}\n`;
}

/** The settle line of a run's summary (src/run/settle.ts); none when nothing was left to settle. */
function settleLine(s: RunReport['settle']): string[] {
  if (!s || s.recounted + s.waiting === 0) return [];
  const line =
    `  settle: ${s.recounted} windows of earlier runs recounted in ${s.requests} requests (${s.waiting} waiting): ` +
    `${s.settled} settled, ${s.reexported} re-exported (count differed), ${s.pending} pending (within the ${formatDuration(s.horizon_s)} settle horizon), ${s.not_provable} not provable`;
  return s.error === undefined ? [line] : [line, `  settle: RECOUNT FAILED (${s.error}); the next run recounts those windows`];
}

/** What a stopped run kept and abandoned (RunReport.stop). */
function stopLine(s: NonNullable<RunReport['stop']>): string {
  const grace = `${s.grace_s}s grace period, until ${s.deadline}${s.grace_expired ? ', ran out' : ''}`;
  return (
    `  stopped by ${s.signal}: committed ${s.windows_committed} windows whole and ${s.windows_cut} in part (${s.rows_committed} rows) during the stop (${grace}); ` +
    `${s.windows_abandoned} windows abandoned (in part or whole): the next run exports them`
  );
}
