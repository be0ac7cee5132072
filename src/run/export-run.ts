/**
 * Stage 4 of a run, export: once the plan is made and the lease still held, the claims, the chain
 * heads and the tables' columns recorded (nothing is written at the destination before), then the
 * plan's windows exported and each committed (src/run/export-windows.ts), the Iceberg tables
 * committed as they go.
 */
import { writeKnownHeads } from '../state/chain-heads.js';
import { claimPartitions } from '../state/owners.js';
import { replacementReason } from '../state/replacement-record.js';
import { recordTableColumns } from '../state/table-columns.js';
import { openRunStagingDir } from '../sink/staging-dir.js';
import { exportWindows, type WindowOutcome } from './export-windows.js';
import { icebergCommit } from './iceberg-commits.js';
import type { OpenedRun } from './open-run.js';
import type { StateRead } from './read-state.js';
import type { RunContext } from './run-context.js';
import type { RunPlan } from './run-plan.js';
import { shardLabel } from './shard.js';
import { TableCommits } from './table-commits.js';

/** What the run writes before its first window: claims, the heads found, the tables' columns. */
export async function startWrites(ctx: RunContext, o: OpenedRun, s: StateRead, p: RunPlan): Promise<void> {
  const { input, run, store, open } = ctx;
  const { config, logger } = input;
  const { job } = o;
  o.held.assertHeld();
  const claimed = await claimPartitions(store, job.name, config.output.partitioning, o.streams);
  // A shard claims for the whole job, and other shards (other leases) export under its claims: only an unsharded run withdraws.
  if (!run.shard) open.claims = claimed;
  await writeKnownHeads(store, job.name, s.chains.headsToKeep()).catch((err: Error) =>
    logger.warn({ err: err.message }, 'chain heads not kept for the next run'),
  );
  const shard = run.shard ? { shard: shardLabel(run.shard) } : {};
  logger.info({ job: job.name, run: run.runId, windows: p.units.length, ...shard }, 'plan ready');
  const written = new Set(p.units.map((u) => u.table));
  await recordTableColumns(
    store,
    job,
    p.columns.records.filter((r) => written.has(r.table)),
  );
  for (const [table, change] of p.columns.changes)
    if (written.has(table))
      logger.info(
        { table, added_columns: change.added, promoted_columns: change.promoted },
        'Iceberg table columns evolve: their field ids are recorded before the first file',
      );
}

/** The plan's windows exported and committed; the Iceberg tables committed along the way (their last commit by the report stage). */
export async function exportPlan(
  ctx: RunContext,
  o: OpenedRun,
  s: StateRead,
  p: RunPlan,
): Promise<{ outcomes: WindowOutcome[]; tableCommits: TableCommits | null }> {
  const { input, run, store, stagingDir, open } = ctx;
  const { config, logger } = input;
  const { job, state, held, iceberg } = o;
  await openRunStagingDir(config.stagingDir, run.runId, logger);
  const tableCommits =
    iceberg && input.commitTables !== false
      ? new TableCommits(icebergCommit(iceberg, { ...input, job, store, state, runId: run.runId, guard: () => held.assertHeld() }), logger)
      : null;
  tableCommits?.start(
    config.output.icebergCommitIntervalMs,
    p.units.map((u) => ({ unitKey: u.unitKey, start: u.start, end: u.end })),
    s.listed,
  );
  await s.replacements.record(replacementReason(input, s.repairs.size > 0), p.units, s.listed);
  const outcomes = await exportWindows(p.units, {
    jobName: job.name,
    runId: run.runId,
    client: o.source.client,
    state,
    output: config.output,
    stagingDir,
    unitsInFlight: config.concurrency.unitsInFlight,
    pageSize: input.pageSize,
    prefetch: input.prefetch,
    batchWindows: config.output.batchWindows === 'on',
    blocks: s.blocks,
    fieldIds: p.columns.fieldIds,
    signal: o.signal,
    abandon: open.stop.abandonOn(held.lost),
    exported: (unitKey) => s.listed.get(unitKey) ?? [],
    logger,
    onProgress: (e) => {
      tableCommits?.onProgress(e);
      input.onProgress?.(e);
    },
  }).finally(() => tableCommits?.stop());
  open.committed = outcomes.filter((o) => o.status === 'done').length;
  return { outcomes, tableCommits };
}
