/**
 * Stage 6 of a run, report: the run's report from its plan and outcomes (src/run/report.ts),
 * written beside the state; a dry run's report of what a run would export.
 */
import { errorMessage } from '../errors.js';
import type { WindowOutcome } from './export-windows.js';
import type { OpenedRun } from './open-run.js';
import type { StateRead } from './read-state.js';
import { logDecodeWarnings } from './decode-report.js';
import { buildReport, type RunReport } from './report.js';
import { lastRunName, type RunContext } from './run-context.js';
import type { RunPlan } from './run-plan.js';
import { shardLabel } from './shard.js';
import { emptyStreamsLine } from './empty-streams.js';

/** The report of the run's windows, with what its stages found (reorganisations, settling, shards, files no state names). */
export function reportOfRun(
  ctx: RunContext,
  o: OpenedRun,
  s: StateRead,
  p: RunPlan,
  outcomes: WindowOutcome[],
  interrupted: boolean,
): RunReport {
  const { run, store } = ctx;
  const report = buildReport({
    job: o.job,
    runId: run.runId,
    started: run.started,
    plan: p.plan,
    outcomes,
    destination: store.location,
    client: o.source.client,
    storeStats: store.stats,
    interrupted,
    shard: run.shard ? shardLabel(run.shard) : null,
    reorgs: s.reorgs,
    serviceHeads: [...p.serviceHeads],
    settle: s.settle,
  });
  return {
    ...report,
    ...(p.balance ? { shards: [...p.balance] } : {}),
    ...(p.unreferenced ? { unreferenced_files: p.unreferenced } : {}),
  };
}

/** `run --dry-run`: what the run would export; nothing is written. */
export function dryRunReport(ctx: RunContext, o: OpenedRun, s: StateRead, p: RunPlan): RunReport {
  const { input, run } = ctx;
  const shard = run.shard ? { shard: shardLabel(run.shard) } : {};
  input.logger.info({ job: o.job.name, windows: p.units.length, ...shard }, 'dry run: nothing written');
  const wouldExport = p.plan.units.map((u) => ({ unit: u.unitKey, window: [u.window.start, u.window.end] as [number, number] }));
  return { ...reportOfRun(ctx, o, s, p, [], false), dry_run: true, would_export: wouldExport, empty_units: [] };
}

/** The run's report, written beside the state; a run whose record could not be written did not succeed. */
export async function finishReport(ctx: RunContext, o: OpenedRun, report: RunReport): Promise<RunReport> {
  const logger = ctx.input.logger;
  if (report.empty_units?.length) logger.warn({ empty_streams: report.empty_units.length }, emptyStreamsLine(report.empty_units));
  logDecodeWarnings(logger, report);
  try {
    report.report_key = await o.state.writeReport(ctx.run.runId, report, lastRunName(ctx.run.shard));
  } catch (err) {
    // The windows are committed (or not) on their own; only the record of this run is missing, so the caller still gets it.
    // A run whose record is missing did not succeed: exit code and pushed metrics say failed.
    report.report_error = errorMessage(err);
    if (report.status === 'succeeded') report.status = 'failed';
    logger.error({ err: report.report_error }, 'run report not written to the destination');
  }
  return report;
}
