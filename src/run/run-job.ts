/**
 * One run of a job, as stages in the order data flows, each a call into its own module:
 * open (src/run/open-run.ts) -> read state (read-state.ts) -> plan (run-plan.ts) -> export
 * (export-run.ts) -> after the export (after-export.ts) -> report (finish-run.ts).
 */
import { rm } from 'node:fs/promises';
import { errorMessage, InterruptedError, UserInputError } from '../errors.js';
import type { Logger } from '../log.js';
import { LeaseHeldError } from '../state/lease.js';
import { newRunId } from '../state/run-id.js';
import { removedStreamsNote } from '../state/removed-streams.js';
import { checkRewindAxis } from '../state/rewind.js';
import { WindowState } from '../state/window-state.js';
import { runStagingDir } from '../sink/staging-dir.js';
import { openStore } from '../store/open-store.js';
import type { ObjectStore } from '../store/store.js';
import { afterExport } from './after-export.js';
import { exportPlan, startWrites } from './export-run.js';
import { dryRunReport, finishReport, reportOfRun } from './finish-run.js';
import { GracefulStop } from './graceful-stop.js';
import { limitHeapGrowth } from './heap-growth.js';
import { adviseMallocTuning } from './malloc-tuning.js';
import { openRun } from './open-run.js';
import { readState } from './read-state.js';
import { attachFailureReport, buildFailureReport, type RunReport } from './report.js';
import { lastRunName, type OpenedResources, type RunContext, type RunIdentity, type RunJobInput } from './run-context.js';
import { planRun } from './run-plan.js';
import { ownsMarker, shardLabel } from './shard.js';
import type { SourceSession } from './source-session.js';

export type { RunJobInput } from './run-context.js';
export { lastRunName } from './run-context.js';

/**
 * One run of a job: resolve names, read state, plan what is missing, export it, record it, and
 * leave a run report beside the state. Never throws for a failed unit: the report says which
 * units failed (the caller turns that into the exit code).
 */
export async function runJob(input: RunJobInput): Promise<RunReport> {
  const { config, logger } = input;
  limitHeapGrowth();
  if (config.output.format === 'parquet' && config.output.parquetEngine === 'duckdb') adviseMallocTuning(logger);
  const run: RunIdentity = { runId: newRunId(), started: Date.now(), shard: input.shard ?? null };
  const store = await openDestination(input, run);
  const stagingDir = runStagingDir(config.stagingDir, run.runId);
  const open: OpenedResources = {
    lease: null,
    source: null,
    state: null,
    claims: [],
    committed: 0,
    stop: new GracefulStop(input.signal, config.stopGraceMs, logger),
  };
  try {
    const report = await runAgainst({ input, run, store, stagingDir, open });
    if (report.status !== 'succeeded') await withdrawClaims(store, input.job.name, open, input.logger);
    return report;
  } catch (err) {
    await withdrawClaims(store, input.job.name, open, input.logger);
    // Another run of the job holds the lease (exit 75): this one did nothing and the holder reports; a "failed" report would be a false alarm.
    if (err instanceof LeaseHeldError) throw err;
    const report = failureReport(input, run, err, open.source?.client, store.location, store.stats);
    if (open.state && open.lease && !open.lease.lost.aborted) {
      try {
        report.report_key = await open.state.writeReport(run.runId, report, lastRunName(run.shard));
      } catch (writeErr) {
        report.report_error = errorMessage(writeErr);
      }
    }
    throw err;
  } finally {
    await rm(stagingDir, { recursive: true, force: true });
    await open.source?.close();
    await open.lease?.release();
    await store.close?.();
    open.stop.dispose();
  }
}

/**
 * Every run that fails says so: its report (status, error, figures) goes to the caller for the
 * metrics and --json, and to the destination when the run held its lease there.
 */
function failureReport(
  input: RunJobInput,
  run: RunIdentity,
  err: unknown,
  client: SourceSession['client'] | undefined,
  location: string,
  storeStats?: { retries: number },
): RunReport {
  const report = buildFailureReport({
    job: input.job,
    runId: run.runId,
    started: run.started,
    destination: location,
    client,
    storeStats,
    interrupted: input.signal?.aborted === true || err instanceof InterruptedError,
    shard: run.shard ? shardLabel(run.shard) : null,
    error: errorMessage(err),
  });
  attachFailureReport(err, report);
  return report;
}

async function openDestination(input: RunJobInput, run: RunIdentity): Promise<ObjectStore> {
  const destination = input.config.output.destination;
  try {
    if (!destination) {
      throw new UserInputError('No output destination is set', {
        hint: 'Set output.destination in the job, INSIGHT_EXPORT_DESTINATION, or --destination (s3://bucket/prefix or a local path).',
      });
    }
    if (input.rewind) checkRewindAxis(input.rewind, input.job.range?.by, input.job.jobFile);
    return await openStore(destination, { s3: input.config.s3, logger: input.logger });
  } catch (err) {
    failureReport(input, run, err, undefined, destination ? destination.url : '');
    throw err;
  }
}

/** The run once its destination is open: its stages, up to its report. */
async function runAgainst(ctx: RunContext): Promise<RunReport> {
  const { input, run, open } = ctx;
  const opened = await openRun(ctx);
  const held = await readState(ctx, opened);
  const plan = await planRun(ctx, opened, held);
  const removed = await removedStreamsNote(ctx.store, opened.job, held.listed);
  if (removed) input.logger.warn({ units: removed.streams.map((s) => s.unit) }, `streams no longer in the job: ${removed.next}`);
  const withRemoved = (r: RunReport) => (removed ? Object.assign(r, { removed_streams: removed }) : r);
  if (input.dryRun) return withRemoved(dryRunReport(ctx, opened, held, plan));
  await startWrites(ctx, opened, held, plan);
  const { outcomes, tableCommits } = await exportPlan(ctx, opened, held, plan);
  await afterExport({
    ...{ state: opened.state, held: opened.held, ownership: plan.ownership, cleans: ownsMarker(run.shard, plan.split) },
    ...{ repairs: held.repairs, replacements: held.replacements, outcomes, logger: input.logger },
  });
  const report = withRemoved(reportOfRun(ctx, opened, held, plan, outcomes, input.signal?.aborted === true));
  Object.assign(report, held.replacements.reported(), open.stop.reported(outcomes));
  if (tableCommits) report.iceberg_commits = await tableCommits.finish();
  return finishReport(ctx, opened, report);
}

/**
 * A run that ends without a window exported withdraws the claims it wrote: it exported nothing of
 * those partitions, and another job (the same one renamed, say) may take them. Never while the
 * job has a completed window at the destination (whatever this run's own count says).
 */
async function withdrawClaims(store: ObjectStore, jobName: string, open: OpenedResources, logger: Logger): Promise<void> {
  if (open.claims.length === 0 || open.committed > 0) return;
  const exported = await new WindowState(store, jobName).hasCompleted().catch(() => true);
  if (exported) return;
  await store.deleteMany(open.claims).then(
    () => logger.info({ claims: open.claims.length }, 'nothing exported: partition claims withdrawn'),
    (err: Error) => logger.warn({ err: err.message }, 'partition claims not withdrawn; insight-export release removes them'),
  );
  open.claims = [];
}
