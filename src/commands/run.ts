import type { CommandModule } from 'yargs';
import { ExitCode } from '../errors.js';
import { runJob } from '../run/run-job.js';
import { failureReportOf, type RunReport } from '../run/report.js';
import { parsePushgatewayUrl, pushMetrics } from '../run/metrics.js';
import { resolveShard } from '../run/shard.js';
import { parseRewind } from '../state/rewind.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import { ProgressLine } from './progress.js';

interface RunArgs extends ConfigArgs {
  job: string;
  force: boolean;
  rewind?: string | undefined;
  json: boolean;
  shard?: string | undefined;
  pushgateway?: string | undefined;
}

/** How long a run may take to stop cleanly after SIGINT/SIGTERM before it exits regardless. */
export const STOP_GRACE_MS = 10_000;

export function runCommand(setExit: (code: number) => void): CommandModule<object, RunArgs> {
  return {
    command: 'run <job>',
    describe: 'Export what the job asks for and is not exported yet; resumes where the last run stopped',
    builder: (y) =>
      withConfigFlags(y)
        .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
        .option('force', { type: 'boolean', default: false, describe: 'Re-export every window of the range, replacing its files' })
        .option('rewind', {
          type: 'string',
          describe:
            'Export the most recent windows of every unit again, replacing their files (reorganisations): blocks ("128") or a duration ("6h") back from the newest exported point',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the run report as JSON on stdout' })
        .option('shard', {
          type: 'string',
          describe:
            'Export shard i of N (0-based "i/N"); default: JOB_COMPLETION_INDEX/JOB_COMPLETION_COUNT or AWS_BATCH_JOB_ARRAY_INDEX/AWS_BATCH_JOB_ARRAY_SIZE when set',
        })
        .option('pushgateway', {
          type: 'string',
          describe: 'Push run metrics to this Prometheus Pushgateway URL (default: INSIGHT_EXPORT_PUSHGATEWAY_URL)',
        })
        .example('$0 run jobs/x.yaml --shard 2/8', 'One of eight workers of a sharded backfill')
        .example('$0 run jobs/demo.yaml', 'Run the demo job (built-in sandbox -> ./out)')
        .example('$0 run jobs/s3-export.yaml --destination s3://my-bucket/insight', 'Export to S3')
        .example('$0 run jobs/x.yaml --format ndjson --requests-per-second 20', 'NDJSON.gz, rate-limited') as never,
    handler: async (args) => {
      const ctx = await loadJobContext(args.job, args, ['source', 'destination']);
      const rewind = args.rewind === undefined ? null : parseRewind(args.rewind);
      const shard = resolveShard(args.shard);
      const pushUrl = args.pushgateway ?? process.env.INSIGHT_EXPORT_PUSHGATEWAY_URL;
      const pushTarget = pushUrl
        ? parsePushgatewayUrl(pushUrl, args.pushgateway ? '--pushgateway' : 'INSIGHT_EXPORT_PUSHGATEWAY_URL')
        : null;
      const controller = new AbortController();
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        signals++;
        if (signals === 1) {
          ctx.logger.warn({ signal }, 'stopping: windows in progress are abandoned (nothing half-written stays); run again to resume');
          controller.abort(signal);
          // A step that does not stop (a store still retrying, a file system that does not answer)
          // must not keep the process: after the grace period it ends as a crash would, which the
          // commit protocol makes safe (the next run removes what is unfinished and takes the lease over).
          setTimeout(() => {
            ctx.logger.error({ signal, graceMs: STOP_GRACE_MS }, 'did not stop within the grace period: exiting; run again to resume');
            process.exit(ExitCode.interrupted);
          }, STOP_GRACE_MS).unref();
        } else {
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
            rewind,
            shard,
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
            if (args.json) process.stdout.write(`${JSON.stringify(failed, null, 2)}\n`);
          }
          throw err;
        }
        progress.finish();
        await push(report);
        process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : summary(report));
        setExit(report.status === 'succeeded' ? ExitCode.ok : report.status === 'interrupted' ? ExitCode.interrupted : ExitCode.failed);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    },
  };
}

function summary(r: RunReport): string {
  const lines = [
    `${r.status}: job ${r.job}${r.shard ? ` (shard ${r.shard})` : ''} -> ${r.destination}`,
    `  windows: ${r.windows.done} done, ${r.windows.failed} failed, ${r.windows.abandoned} abandoned of ${r.windows.planned} planned; ${r.units_skipped}/${r.units_total} units already complete`,
    `  rows: ${r.rows}  files: ${r.files}  bytes: ${r.bytes}  requests: ${r.requests} (${r.retries} retries)  ${r.duration_s}s`,
    r.report_error === undefined
      ? `  report: ${r.report_key ?? '-'}`
      : `  report: NOT WRITTEN to the destination (${r.report_error.split('\n')[0]}); run with --json to keep it`,
  ];
  for (const u of r.empty_units ?? []) lines.push(`  warning: no rows at all for ${u}: check its address, signature, filters and range`);
  for (const f of r.failed) lines.push(`  FAILED ${f.unit} [${f.window[0]}, ${f.window[1]}): ${f.error.split('\n')[0]}`);
  for (const w of r.warnings) lines.push(`  WARNING ${w.unit}: ${w.warning}`);
  return `${lines.join('\n')}\n`;
}
