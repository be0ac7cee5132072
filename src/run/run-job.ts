import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { ResolvedConfig } from '../config/index.js';
import { errorMessage, UserInputError } from '../errors.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { planJob, type ChainHead, type Interval, type Plan, type WorkUnit } from '../plan/index.js';
import { findChainHead } from '../source/chain-head.js';
import type { InsightClient } from '../source/client.js';
import { openStore } from '../store/open-store.js';
import { WindowState } from '../state/window-state.js';
import { acquireLease, leaseName, type Lease } from '../state/lease.js';
import { checkRewindAxis, rewindCompleted, type Rewind } from '../state/rewind.js';
import type { DatasetName, ListDataset } from '../datasets/dataset.js';
import { aggregatesDataset } from '../datasets/aggregates.js';
import { eventsDataset } from '../datasets/events.js';
import { nftHoldingsDataset } from '../datasets/nft-holdings.js';
import { transactionsDataset } from '../datasets/transactions.js';
import { exportUnits, type ExportUnit, type ProgressEvent } from './export-units.js';
import { openSource, type SourceSession } from './source-session.js';
import { resolveWalletNames, TargetFactory } from './targets.js';
import { buildReport, type RunReport } from './report.js';
import { limitHeapGrowth } from './heap-growth.js';
import { adviseMallocTuning } from './malloc-tuning.js';
import { openRunStagingDir, runStagingDir } from '../sink/staging-dir.js';
import { planForShard, shardLabel, shardOwnsUnit, type Shard } from './shard.js';

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
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomUUID().slice(0, 8)}`;
  const started = Date.now();
  const destination = config.output.destination;
  if (!destination) {
    throw new UserInputError('No output destination is set', {
      hint: 'Set output.destination in the job, INSIGHT_EXPORT_DESTINATION, or --destination (s3://bucket/prefix or a local path).',
    });
  }
  if (input.rewind) checkRewindAxis(input.rewind, input.job.range?.by, input.job.jobFile);
  const store = openStore(destination, { s3: config.s3, logger });
  const shard = input.shard ?? null;
  const stagingDir = runStagingDir(config.stagingDir, runId);
  let lease: Lease | null = null;
  let source: SourceSession | null = null;
  try {
    // Names are resolved (read-only) before the lease, so a job whose names are wrong leaves
    // nothing at the destination, not even a lease.
    source = await openSource(config, logger);
    const job = await resolveWalletNames(input.job, source.client);
    // One run of a job (or of a shard) at a time: nothing is written before the lease is held.
    const held = (lease = await acquireLease(store, input.job.name, { runId, name: leaseName(shard), ttlMs: input.leaseTtlMs, logger }));
    const signal = input.signal ? AbortSignal.any([input.signal, held.lost]) : held.lost;
    const state = new WindowState(store, job.name, { runId, guard: () => held.assertHeld() });
    const owns = (unitKey: string) => shardOwnsUnit(shard, unitKey);
    const orphans = await state.cleanPending(owns);
    if (orphans.length > 0) logger.warn({ files: orphans.length }, 'removed files of windows a previous run did not complete');

    const done = await state.completedIntervals();
    let completed = input.force ? new Map<string, Interval[]>() : done;
    if (input.rewind && !input.force) {
      const r = rewindCompleted(done, input.rewind);
      completed = r.completed;
      const mine = r.rewound.filter((x) => owns(x.unitKey));
      const windows = mine.reduce((n, x) => n + x.windows.length, 0);
      if (windows > 0) logger.info({ rewind: input.rewind.text, units: mine.length, windows }, 'exporting the most recent windows again');
    }
    const plan = planForShard(
      await planJob(job, {
        completed: (unitKey) => completed.get(unitKey) ?? [],
        latest: headFinder(job, source.client),
      }),
      shard,
    );
    input.onPlan?.(plan);
    const factory = new TargetFactory(job);
    const units = await Promise.all(plan.units.map((u) => toExportUnit(u, factory)));
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
        engine: config.output.parquetEngine,
        compression: config.output.compression,
        partitioning: config.output.partitioning,
        maxRowsPerFile: config.output.maxRowsPerFile,
        maxBytesPerFile: config.output.maxBytesPerFile,
      },
      stagingDir,
      unitsInFlight: config.concurrency.unitsInFlight,
      pageSize: input.pageSize,
      prefetch: input.prefetch,
      replace: input.force === true || Boolean(input.rewind),
      signal,
      logger,
      onProgress: input.onProgress,
    });
    if (!held.lost.aborted) {
      // Windows abandoned or failed in the middle of their commit: remove their uploads now, not at the next run.
      await state.cleanPending(owns).catch((err: Error) => logger.warn({ err: err.message }, 'uploads of unfinished windows not removed; the next run removes them'));
    }
    if (held.lost.aborted) throw held.lost.reason;
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
    });
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
  } finally {
    await rm(stagingDir, { recursive: true, force: true });
    await source?.close();
    await lease?.release();
    await store.close?.();
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each dataset has its own row and target types; this list of all of them erases them
const DATASETS: Record<DatasetName, ListDataset<any, any>> = {
  transactions: transactionsDataset,
  events: eventsDataset,
  aggregates: aggregatesDataset,
  nft_holdings: nftHoldingsDataset,
};

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

/**
 * Chain heads for `to: latest`: the newest row of the job's first target on that chain is a block
 * that exists, from which the head is searched (see findChainHead).
 */
export function headFinder(job: Job, client: InsightClient): (chainId: number) => Promise<ChainHead> {
  return async (chainId) => {
    let known: number | undefined;
    const target = job.targets.find((t) => t.chains.includes(chainId));
    const newest = { chainIds: [chainId], sortBy: 'block_number' as const, sortOrder: 'desc' as const, limit: 1 };
    if (target?.kind === 'wallet') {
      known = (await client.walletTransactions(target.wallet, newest)).data[0]?.block_number;
    } else if (target?.kind === 'contract' && target.events[0]) {
      known = (await client.contractEvents(target.contract, target.events[0].signature, newest)).data[0]?.block_number;
    }
    const head = await findChainHead(client, chainId, known);
    return { block: head.block_number, time: head.block_timestamp };
  };
}

