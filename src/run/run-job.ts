import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { ResolvedConfig } from '../config/index.js';
import { errorMessage, InterruptedError, UserInputError } from '../errors.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { planJob, type Interval, type Plan, type WorkUnit } from '../plan/index.js';
import { unitSpecs } from '../plan/plan.js';
import { openStore } from '../store/open-store.js';
import type { ObjectStore } from '../store/store.js';
import { WindowState } from '../state/window-state.js';
import { acquireLease, LeaseHeldError, leaseName, type Lease } from '../state/lease.js';
import { checkRewindAxis, rewindCompleted, type Rewind } from '../state/rewind.js';
import { checkReorgs, reorgHorizon, type ReorgFound } from '../state/reorg-check.js';
import { BlockLookup } from '../source/block-by-number.js';
import { DATASETS, isSnapshot } from '../datasets/index.js';
import { exportUnits, type ExportUnit, type ProgressEvent } from './export-units.js';
import { openSource, type SourceSession } from './source-session.js';
import { resolveWalletNames, TargetFactory } from './targets.js';
import { attachFailureReport, buildFailureReport, buildReport, type RunReport } from './report.js';
import { limitHeapGrowth } from './heap-growth.js';
import { adviseMallocTuning } from './malloc-tuning.js';
import { openRunStagingDir, runStagingDir } from '../sink/staging-dir.js';
import { ChainChecks, headFinder } from './chains.js';
import { readKnownHeads, writeKnownHeads } from '../state/chain-heads.js';
import { planForShard, shardLabel, shardOwnsUnit, type Shard } from './shard.js';
import { claimPartitions } from '../state/owners.js';
import { DestinationFormatError, heldFormat } from '../state/destination-format.js';

export interface RunJobInput {
  job: Job;
  config: ResolvedConfig;
  logger: Logger;
  /** Re-export every window of the range, replacing files, even those state marks done. */
  force?: boolean;
  signal?: AbortSignal;
  onProgress?(event: ProgressEvent): void;
  onPlan?(plan: Plan): void;
  /** Export only this shard's units (a whole unit key per shard; see src/run/shard.ts). */
  shard?: Shard | null;
  /** Export the most recent windows of every unit again, replacing their files (reorganisations). */
  rewind?: Rewind | null;
  /** How long the job's lease lasts without renewal (default 120 s; see src/state/lease.ts). */
  leaseTtlMs?: number;
  /** Rows per page per chain (default 1000, the service's maximum); bench/ uses small pages. */
  pageSize?: number;
  /** Pages requested ahead per window (see ExportOptions.prefetch). */
  prefetch?: number;
  /**
   * Check and plan everything a run would (job, config, destination reachability, ownership and
   * format, chains and contracts served) and stop before the first write: no lease, no claim, no
   * file, no state. The report has `dry_run: true`, no window done, and `onPlan` has the plan.
   */
  dryRun?: boolean;
}

/**
 * One run of a job: resolve names, read state, plan what is missing, export it, record it, and
 * leave a run report beside the state. Never throws for a failed unit: the report says which
 * units failed (the caller turns that into the exit code).
 */
export async function runJob(input: RunJobInput): Promise<RunReport> {
  const { config, logger } = input;
  limitHeapGrowth();
  if (config.output.format === 'parquet' && config.output.parquetEngine === 'duckdb') adviseMallocTuning(logger);
  const runId = `${new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomUUID().slice(0, 8)}`;
  const started = Date.now();
  const shard = input.shard ?? null;
  // Every run that fails says so: its report (status, error, figures) goes to the caller for the
  // metrics and --json, and to the destination when the run held its lease there.
  const failure = (err: unknown, client: SourceSession['client'] | undefined, location: string): RunReport => {
    const report = buildFailureReport({
      job: input.job,
      runId,
      started,
      destination: location,
      client,
      interrupted: input.signal?.aborted === true || err instanceof InterruptedError,
      shard: shard ? shardLabel(shard) : null,
      error: errorMessage(err),
    });
    attachFailureReport(err, report);
    return report;
  };
  const destination = config.output.destination;
  let store: ObjectStore;
  try {
    if (!destination) {
      throw new UserInputError('No output destination is set', {
        hint: 'Set output.destination in the job, INSIGHT_EXPORT_DESTINATION, or --destination (s3://bucket/prefix or a local path).',
      });
    }
    if (input.rewind) checkRewindAxis(input.rewind, input.job.range?.by, input.job.jobFile);
    store = await openStore(destination, { s3: config.s3, logger });
  } catch (err) {
    failure(err, undefined, destination ? destination.url : '');
    throw err;
  }
  const stagingDir = runStagingDir(config.stagingDir, runId);
  const dryRun = input.dryRun === true;
  let lease: Lease | null = null;
  let source: SourceSession | null = null;
  let runState: WindowState | null = null;
  try {
    // Names are resolved (read-only) before the lease, so a job whose names are wrong leaves
    // nothing at the destination, not even a lease.
    source = await openSource(config, logger);
    if (input.signal) source.client.stopOn(input.signal);
    const job = await resolveWalletNames(input.job, source.client);
    // One run of a job (or of a shard) at a time: nothing is written before the lease is held.
    const held = dryRun
      ? noLease()
      : (lease = await acquireLease(store, input.job.name, { runId, name: leaseName(shard), ttlMs: input.leaseTtlMs, logger }));
    const signal = input.signal ? AbortSignal.any([input.signal, held.lost]) : held.lost;
    const state = (runState = new WindowState(store, job.name, { runId, guard: () => held.assertHeld() }));
    const owns = (unitKey: string) => shardOwnsUnit(shard, unitKey);
    await claimPartitions(store, job.name, config.output.partitioning, unitSpecs(job), { checkOnly: dryRun });
    const orphans = dryRun ? [] : await state.cleanPending(owns);
    if (orphans.length > 0) logger.warn({ files: orphans.length }, 'removed files of windows a previous run did not complete');

    const done = await state.completedIntervals();
    if (!input.force) {
      const holds = await heldFormat(state, done);
      if (holds && holds !== config.output.format) throw new DestinationFormatError(store.location, job.name, holds, config.output.format);
    }
    let completed = input.force ? new Map<string, Interval[]>() : done;
    if (input.rewind && !input.force) {
      const r = rewindCompleted(done, input.rewind);
      completed = r.completed;
      const mine = r.rewound.filter((x) => owns(x.unitKey));
      const windows = mine.reduce((n, x) => n + x.windows.length, 0);
      if (windows > 0) logger.info({ rewind: input.rewind.text, units: mine.length, windows }, 'exporting the most recent windows again');
    }
    const chains = new ChainChecks(job, source.client, await readKnownHeads(store, job.name), logger);
    const contractsOn = (units: { target: WorkUnit['target']; chainId: number }[]) =>
      units.flatMap((u) => (u.target.kind === 'contract' ? [{ contract: u.target.contract, chainId: u.chainId }] : []));
    // Before the head search of `to: latest` (whose hints resolve the targets): an unknown contract is the precise cause.
    if (job.range?.to === 'latest') await chains.checkContracts(contractsOn(unitSpecs(job)));
    const heads = headFinder(chains);
    const blocks = new BlockLookup(source.client, heads);
    let reorgs: ReorgFound[] = [];
    // Units under repair: the windows an earlier run found reorganised and did not finish exporting again.
    const repairs = new Map([...(await state.pendingRepairs())].filter(([unitKey]) => owns(unitKey)));
    if (!input.force) {
      const range = job.range;
      const r = await checkReorgs({
        state,
        completed,
        owns,
        blocks,
        horizon: (chainId) => reorgHorizon(range?.reorg_horizon, chainId),
        logger,
      });
      completed = r.completed;
      reorgs = r.reorgs;
      for (const found of reorgs) {
        const windows = [...(repairs.get(found.unit_key) ?? []), ...found.windows];
        if (!dryRun) await state.writeRepair(found.unit_key, windows);
        repairs.set(found.unit_key, windows);
      }
      for (const [unitKey, windows] of repairs) {
        const overlaps = (iv: { start: number; end: number }) => windows.some((w) => iv.start < w.end && w.start < iv.end);
        completed.set(
          unitKey,
          (completed.get(unitKey) ?? []).filter((iv: { start: number; end: number }) => !overlaps(iv)),
        );
      }
    }
    const plan = planForShard(
      await planJob(job, {
        completed: (unitKey) => completed.get(unitKey) ?? [],
        latest: async (chainId) => {
          const head = await heads(chainId);
          if (head.block !== undefined && head.time !== undefined) blocks.hint(chainId, head.block, head.time);
          return head;
        },
      }),
      shard,
    );
    input.onPlan?.(plan);
    for (const c of plan.clamped)
      logger.warn(
        { chainId: c.chainId, to: c.to, end: c.end },
        'range.to is past the chain head minus the safety lag: exporting up to the head now, the rest in later runs',
      );
    const factory = new TargetFactory(job);
    const units = await Promise.all(plan.units.map((u) => toExportUnit(u, factory)));
    // A chain the service does not serve, or a contract it never saw, answers with empty pages:
    // refuse them before exporting anything (after the job's own checks, which need no request).
    const listed = plan.units.filter((u) => !isSnapshot(u.dataset));
    await chains.checkContracts(contractsOn(listed));
    await chains.checkServed(listed.map((u) => u.chainId));
    if (dryRun) {
      logger.info({ job: job.name, windows: units.length, ...(shard ? { shard: shardLabel(shard) } : {}) }, 'dry run: nothing written');
      const report = buildReport({
        job,
        runId,
        started,
        plan,
        outcomes: [],
        destination: store.location,
        client: source.client,
        interrupted: false,
        shard: shard ? shardLabel(shard) : null,
        reorgs,
      });
      const wouldExport = plan.units.map((u) => ({ unit: u.unitKey, window: [u.window.start, u.window.end] as [number, number] }));
      return { ...report, dry_run: true, would_export: wouldExport, empty_units: [] };
    }
    held.assertHeld();
    await writeKnownHeads(store, job.name, chains.found).catch((err: Error) =>
      logger.warn({ err: err.message }, 'chain heads not kept for the next run'),
    );
    logger.info({ job: job.name, run: runId, windows: units.length, ...(shard ? { shard: shardLabel(shard) } : {}) }, 'plan ready');

    await openRunStagingDir(config.stagingDir, runId, logger);
    const outcomes = await exportUnits(units, {
      jobName: job.name,
      runId,
      client: source.client,
      store,
      state,
      output: {
        format: config.output.format,
        parquetEngine: config.output.parquetEngine,
        compression: config.output.compression,
        partitioning: config.output.partitioning,
        maxRowsPerFile: config.output.maxRowsPerFile,
        maxBytesPerFile: config.output.maxBytesPerFile,
      },
      stagingDir,
      unitsInFlight: config.concurrency.unitsInFlight,
      pageSize: input.pageSize,
      prefetch: input.prefetch,
      blocks,
      signal,
      logger,
      onProgress: input.onProgress,
    });
    if (!held.lost.aborted) {
      // Windows abandoned or failed in the middle of their commit: remove their uploads now, not at the next run.
      await state
        .cleanPending(owns)
        .catch((err: Error) => logger.warn({ err: err.message }, 'uploads of unfinished windows not removed; the next run removes them'));
    }
    if (held.lost.aborted) throw held.lost.reason;
    // A unit whose windows all committed is repaired.
    for (const unitKey of repairs.keys()) {
      if (outcomes.some((o) => o.unitKey === unitKey && o.status !== 'done')) continue;
      await state
        .clearRepair(unitKey)
        .catch((err: Error) =>
          logger.warn({ unit: unitKey, err: err.message }, 'repair record not removed; the next run exports its windows again'),
        );
    }
    const report = buildReport({
      job,
      runId,
      started,
      plan,
      outcomes,
      destination: store.location,
      client: source.client,
      interrupted: input.signal?.aborted === true,
      shard: shard ? shardLabel(shard) : null,
      reorgs,
    });
    if (report.empty_units?.length)
      logger.warn({ units: report.empty_units }, 'no rows at all for these units: check their address, signature, filters and range');
    const lastRun = shard ? `last-run-shard-${shard.index}-of-${shard.count}.json` : undefined;
    try {
      report.report_key = await state.writeReport(runId, report, lastRun);
    } catch (err) {
      // The windows are committed (or not) on their own; only the record of this run is missing, so the caller still gets it.
      // A run whose record is missing did not succeed: exit code and pushed metrics say failed.
      report.report_error = errorMessage(err);
      if (report.status === 'succeeded') report.status = 'failed';
      logger.error({ err: report.report_error }, 'run report not written to the destination');
    }
    return report;
  } catch (err) {
    // Another run of the job holds the lease (exit 75): this one did nothing and the holder reports; a "failed" report would be a false alarm.
    if (err instanceof LeaseHeldError) throw err;
    const report = failure(err, source?.client, store.location);
    if (runState && lease && !lease.lost.aborted) {
      const lastRun = shard ? `last-run-shard-${shard.index}-of-${shard.count}.json` : undefined;
      try {
        report.report_key = await runState.writeReport(runId, report, lastRun);
      } catch (writeErr) {
        report.report_error = errorMessage(writeErr);
      }
    }
    throw err;
  } finally {
    await rm(stagingDir, { recursive: true, force: true });
    await source?.close();
    await lease?.release();
    await store.close?.();
  }
}

/** A dry run holds no lease: it writes nothing a lease would protect. */
function noLease(): Pick<Lease, 'lost' | 'assertHeld'> {
  return { lost: new AbortController().signal, assertHeld: () => undefined };
}

async function toExportUnit(u: WorkUnit, factory: TargetFactory): Promise<ExportUnit> {
  return {
    dataset: DATASETS[u.dataset],
    target: await factory.forDataset(u),
    chainId: u.chainId,
    axis: u.axis,
    start: u.window.start,
    end: u.window.end,
    unitKey: u.unitKey,
    filters: u.filters,
  };
}
