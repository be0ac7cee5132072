import pLimit from 'p-limit';
import { rm } from 'node:fs/promises';
import type { ResolvedConfig } from '../config/index.js';
import { errorMessage, InterruptedError, UserInputError } from '../errors.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { planJob, type Interval, type Plan, type WorkUnit } from '../plan/index.js';
import { unitSpecs } from '../plan/plan.js';
import { openStore } from '../store/open-store.js';
import type { ObjectStore } from '../store/store.js';
import { newRunId } from '../state/run-id.js';
import { WindowState } from '../state/window-state.js';
import { LeaseHeldError, type Lease } from '../state/lease.js';
import { acquireJobLease } from '../state/job-lease.js';
import { checkRewindAxis, rewindCompleted, type Rewind } from '../state/rewind.js';
import { checkReorgs, reorgHorizon, type ReorgFound } from '../state/reorg-check.js';
import { BlockLookup } from '../source/block-by-number.js';
import { DATASETS, isSnapshot } from '../datasets/index.js';
import { exportUnits, type ExportUnit, type ProgressEvent } from './export-units.js';
import { openSource, type SourceSession } from './source-session.js';
import { checkDatasetOptions, resolveWalletNames, TargetFactory } from './targets.js';
import { attachFailureReport, buildFailureReport, buildReport, type RunReport } from './report.js';
import { limitHeapGrowth } from './heap-growth.js';
import { adviseMallocTuning } from './malloc-tuning.js';
import { openRunStagingDir, runStagingDir } from '../sink/staging-dir.js';
import { ChainChecks, headFinder } from './chains.js';
import { readKnownHeads, writeKnownHeads } from '../state/chain-heads.js';
import { ownsMarker, ownershipOf, planForShard, shardLabel, type Ownership, type Shard } from './shard.js';
import { readShardSplit, settleShardSplit } from '../state/shard-split-record.js';
import { expectedRowsFrom, unitDensities } from '../state/unit-densities.js';
import { takeOutRepaired } from '../state/repair-record.js';
import { ownerOf, shardLoads, type ChainHead, type ExpectedRows, type ShardLoad, type ShardSplit } from '../plan/index.js';
import { claimPartitions } from '../state/owners.js';
import { recordTableColumns } from '../state/table-columns.js';
import { checkJobTableQueries, jobTables, settleTableColumns } from './tables.js';
import { TableCommits } from './table-commits.js';
import { DestinationFormatError, heldFormat } from '../state/destination-format.js';
import { withoutDamagedWindows } from './repair.js';
import { emptySettleReport, settleWindows, type SettleInput, type SettleReport } from './settle.js';
import { checkUnreferencedBeforeExport, type UnreferencedFound } from './unreferenced-check.js';
import { refuseFilesBeside } from '../state/unreferenced-files.js';
import type { TableCommitted } from '../iceberg/index.js';
import { GracefulStop } from './graceful-stop.js';
import { replacementReason, Replacements } from '../state/replacement-record.js';

export interface RunJobInput {
  job: Job;
  config: ResolvedConfig;
  logger: Logger;
  /** Re-export every window of the range, replacing files, even those state marks done. */
  force?: boolean;
  /**
   * Stops the run (SIGINT, SIGTERM): no new request; what is wholly received is committed within
   * config.stopGraceMs, the rest abandoned (src/run/graceful-stop.ts). The report says "interrupted".
   */
  signal?: AbortSignal;
  onProgress?(event: ProgressEvent): void;
  onPlan?(plan: Plan): void;
  /** Export only this shard's windows (each unit's windows divided between the shards; see src/run/shard.ts). */
  shard?: Shard | null;
  /** Export the most recent windows of every unit again, replacing their files (reorganisations). */
  rewind?: Rewind | null;
  /** Export again the completed windows whose files are gone, changed, or short of the service's count (src/run/repair.ts). */
  repair?: boolean;
  /** The command that removes the job's files no state names, as this run's messages give it (default: with `<job file>`). */
  removeCommand?: string;
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
  /**
   * Commit the Iceberg tables during and at the end of the run (default true). False for the workers
   * of `run --workers`: their parent commits once all of them have ended.
   */
  commitTables?: boolean;
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
  const run: RunIdentity = { runId: newRunId(), started: Date.now(), shard: input.shard ?? null };
  const store = await openDestination(input, run);
  const stagingDir = runStagingDir(config.stagingDir, run.runId);
  const open: OpenParts = {
    lease: null,
    source: null,
    state: null,
    claims: [],
    committed: 0,
    stop: new GracefulStop(input.signal, config.stopGraceMs, logger),
  };
  try {
    const report = await runAgainst(input, run, store, stagingDir, open);
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

interface RunIdentity {
  runId: string;
  started: number;
  shard: Shard | null;
}

/** What the run opened, closed by runJob whatever happens. */
interface OpenParts {
  lease: Lease | null;
  source: SourceSession | null;
  state: WindowState | null;
  /** Claims this run wrote (see claimPartitions); withdrawn when the run ends having exported nothing. */
  claims: string[];
  /** Windows this run committed. */
  committed: number;
  stop: GracefulStop;
}

/** The "latest report" object of a run: one per shard when sharded. */
export const lastRunName = (shard: Shard | null) => (shard ? `last-run-shard-${shard.index}-of-${shard.count}.json` : undefined);

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

/** The run once its destination is open: everything up to its report. */
async function runAgainst(
  input: RunJobInput,
  run: RunIdentity,
  store: ObjectStore,
  stagingDir: string,
  open: OpenParts,
): Promise<RunReport> {
  const { config, logger } = input;
  const { runId, shard } = run;
  const dryRun = input.dryRun === true;
  // Names are resolved (read-only) before the lease, so a job whose names are wrong leaves
  // nothing at the destination, not even a lease.
  const source = (open.source = await openSource(config, logger));
  if (input.signal) source.client.stopOn(input.signal);
  const onProgress = input.onProgress;
  if (onProgress) source.client.onRequest(() => onProgress({ kind: 'request' }));
  const job = await resolveWalletNames(input.job, source.client);
  // One run of a job (or of a shard) at a time, none beside maintenance (src/state/job-lease.ts): nothing is written before the lease is held.
  if (dryRun) await store.checkConditionalWrites?.(`_state/${input.job.name}/conditional-write-probe`);
  const held = dryRun
    ? noLease()
    : (open.lease = await acquireJobLease(store, input.job.name, { runId, shard, ttlMs: input.leaseTtlMs, logger }));
  const signal = input.signal ? AbortSignal.any([input.signal, held.lost]) : held.lost;
  // Loaded only for an Iceberg destination (Avro).
  const iceberg = config.output.format === 'iceberg' ? await import('../iceberg/index.js') : null;
  iceberg?.checkIcebergLayout(config.output.partitioning);
  const remove = input.removeCommand ?? 'insight-export remove-orphan-files <job file>';
  const state = (open.state = new WindowState(store, job.name, {
    runId,
    guard: () => held.assertHeld(),
    // Files no state names beside a window refuse its commit (src/run/unreferenced-check.ts); an Iceberg table's readers never see them.
    ...(iceberg ? { dropReplaced: iceberg.keepReplacedFiles } : { beforeUpload: refuseFilesBeside(store, job.name, remove) }),
  }));
  // A shard's windows are those the recorded split gives it; the windows it does not cover yet are divided once planned.
  const recorded = shard ? (await readShardSplit(store, job.name, shard.count)).split : null;
  const known = ownershipOf(shard, recorded);
  // Refused at once when another job owns the partitions; claimed only once the run is about to write.
  await claimPartitions(store, job.name, config.output.partitioning, unitSpecs(job), { checkOnly: true });
  const uncovered = { markers: 0 };
  const orphans = dryRun ? [] : await state.cleanPending(countingUncovered(ownsMarker(shard, recorded), recorded, uncovered));
  if (orphans.length > 0) logger.warn({ files: orphans.length }, 'removed files of windows a previous run did not complete');
  // Windows an earlier run committed and did not fold (a crash, or a destination of an older version).
  const folded = dryRun ? 0 : await state.foldMarkers(countingUncovered(ownsMarker(shard, recorded), recorded, uncovered));
  if (folded > 0) logger.info({ windows: folded }, "completed windows folded into their units' manifests");

  const done = await completedWindows(input, job, state, store, known);
  let completed = done.completed;
  const chains = new ChainChecks(job, source.client, await readKnownHeads(store, job.name), logger);
  // Before the head search of `to: latest` (whose hints resolve the targets): an unknown contract is the precise cause.
  if (job.range?.to === 'latest') await chains.checkContracts(contractsOn(unitSpecs(job)));
  const heads = headFinder(chains);
  const blocks = new BlockLookup(source.client, heads);
  let unreferenced: UnreferencedFound | null = null;
  // run --repair: damaged windows (files gone or changed, rows short of the service's count) are exported again.
  if (input.repair && !input.force)
    ({ completed, unreferenced } = await withoutDamagedWindows(completed, {
      job,
      store,
      client: source.client,
      output: config.output,
      owns: known.owns,
      remove,
      logger,
    }));
  // Units under repair: the windows an earlier run found reorganised and not all exported again (by their owners, when sharded).
  const repairs = await state.pendingRepairs();
  let reorgs: ReorgFound[] = [];
  if (!input.force)
    ({ completed, reorgs } = await repairReorgs({
      job,
      state,
      completed,
      frontier: done.frontier,
      owns: known.leads,
      ownsWindow: known.owns,
      blocks,
      logger,
      dryRun,
      repairs,
    }));
  // Replacements a run began and did not finish (stopped, killed) are finished now, whatever the flags.
  const replacements = new Replacements(state, { logger, guard: () => held.assertHeld(), write: !dryRun, runId, shard });
  completed = await replacements.resume(completed, done.listed);
  // Windows of earlier runs not settled yet are recounted; those whose count differs are exported again.
  const recount = await settleRun(input, { job, state, completed, source, known, heads, blocks, run, signal, held });
  completed = recount.completed;
  const settle = recount.report;
  const sharding: { split: ShardSplit | null; balance: ShardLoad[] | null } = { split: null, balance: null };
  const { plan, units } = await planRun(input, job, {
    completed,
    exported: done.listed,
    heads,
    blocks,
    chains,
    select: async (whole) => {
      if (!shard) return whole;
      const densities = { rows: null as ExpectedRows | null };
      // Completed windows first, in spans of their own (a destination exported before it was sharded):
      // every window then has an owner, and the windows to export are divided by themselves.
      const listed = [...done.listed].flatMap(([unitKey, list]) => list.map((window) => ({ unitKey, window })));
      await settleShardSplit(store, job.name, shard.count, { units: listed }, { write: !dryRun, guard: () => held.assertHeld() });
      const split = await settleShardSplit(store, job.name, shard.count, whole, {
        write: !dryRun,
        expected: async (unitKeys) =>
          (densities.rows = expectedRowsFrom(await unitDensities(state, new Map(unitKeys.map((k) => [k, done.listed.get(k) ?? []]))))),
        guard: () => held.assertHeld(),
      });
      sharding.split = split;
      sharding.balance = shardLoads(whole, split, densities.rows ?? undefined);
      return planForShard(whole, shard, split);
    },
  });
  const { split } = sharding;
  const ownership = ownershipOf(shard, split);
  // Markers of windows the recorded split did not cover are this shard's to clean up or fold once the split gives them to it.
  if (uncovered.markers > 0 && !dryRun) {
    const more = await state.cleanPending(ownsMarker(shard, split));
    if (more.length > 0) logger.warn({ files: more.length }, 'removed files of windows a previous run did not complete');
    const late = await state.foldMarkers(ownsMarker(shard, split));
    if (late > 0) logger.info({ windows: late }, "completed windows folded into their units' manifests");
  }
  // A table keeps the columns it was first written with: an edited job is refused before it writes a
  // file (an Iceberg table may gain columns, their field ids recorded before its first file).
  // Checked only with windows to export: a run with nothing to do builds no decoder (viem).
  const tables = units.length > 0 ? await jobTables(job) : [];
  const settled = await settleTableColumns(store, job, tables, config.output.format);
  // ... and, for each window of a target, the query it was first exported with.
  await checkJobTableQueries(state, job, tables, { completed: done.listed, planned: units }, config.output.partitioning);
  const serviceHeads = await chains.serviceHeads(run.started / 1000);
  for (const h of serviceHeads)
    logger.info({ chain: h.chain_id, block: h.block, block_time: h.time, exact: h.exact, behind_clock_s: h.behind_clock_s }, 'service head');
  const reportOfWindows = (outcomes: Parameters<typeof buildReport>[0]['outcomes'], interrupted: boolean) =>
    buildReport({
      job,
      runId,
      started: run.started,
      plan,
      outcomes,
      destination: store.location,
      client: source.client,
      storeStats: store.stats,
      interrupted,
      shard: shard ? shardLabel(shard) : null,
      reorgs,
      serviceHeads,
      settle,
    });
  // A job whose state is empty (a first run, or _state/ lost): files of its windows already there refuse the run.
  if (!iceberg && done.listed.size === 0 && units.length > 0)
    unreferenced = await checkUnreferencedBeforeExport({
      store,
      state,
      job,
      partitioning: config.output.partitioning,
      units,
      remove,
      logger,
    });
  const reportOf = (outcomes: Parameters<typeof buildReport>[0]['outcomes'], interrupted: boolean): RunReport => ({
    ...reportOfWindows(outcomes, interrupted),
    ...(sharding.balance ? { shards: sharding.balance } : {}),
    ...(unreferenced ? { unreferenced_files: unreferenced } : {}),
  });
  if (dryRun) {
    logger.info({ job: job.name, windows: units.length, ...(shard ? { shard: shardLabel(shard) } : {}) }, 'dry run: nothing written');
    const wouldExport = plan.units.map((u) => ({ unit: u.unitKey, window: [u.window.start, u.window.end] as [number, number] }));
    return { ...reportOf([], false), dry_run: true, would_export: wouldExport, empty_units: [] };
  }
  held.assertHeld();
  const claimed = await claimPartitions(store, job.name, config.output.partitioning, unitSpecs(job));
  // A shard claims for the whole job, and other shards (other leases) export under its claims: only an unsharded run withdraws.
  if (!shard) open.claims = claimed;
  await writeKnownHeads(store, job.name, chains.headsToKeep()).catch((err: Error) =>
    logger.warn({ err: err.message }, 'chain heads not kept for the next run'),
  );
  logger.info({ job: job.name, run: runId, windows: units.length, ...(shard ? { shard: shardLabel(shard) } : {}) }, 'plan ready');
  const written = new Set(units.map((u) => u.table));
  await recordTableColumns(
    store,
    job,
    settled.records.filter((r) => written.has(r.table)),
  );
  for (const [table, change] of settled.changes)
    if (written.has(table))
      logger.info(
        { table, added_columns: change.added, promoted_columns: change.promoted },
        'Iceberg table columns evolve: their field ids are recorded before the first file',
      );

  await openRunStagingDir(config.stagingDir, runId, logger);
  const tableCommits =
    iceberg && input.commitTables !== false
      ? new TableCommits(icebergCommit(iceberg, { ...input, job, store, state, runId, guard: () => held.assertHeld() }), logger)
      : null;
  tableCommits?.start(
    config.output.icebergCommitIntervalMs,
    units.map((u) => ({ unitKey: u.unitKey, start: u.start, end: u.end })),
    done.listed,
  );
  await replacements.record(replacementReason(input, repairs.size > 0), units, done.listed);
  const outcomes = await exportUnits(units, {
    jobName: job.name,
    runId,
    client: source.client,
    state,
    output: config.output,
    stagingDir,
    unitsInFlight: config.concurrency.unitsInFlight,
    pageSize: input.pageSize,
    prefetch: input.prefetch,
    batchWindows: config.output.batchWindows === 'on',
    blocks,
    fieldIds: settled.fieldIds,
    signal,
    abandon: open.stop.abandonOn(held.lost),
    exported: (unitKey) => done.listed.get(unitKey) ?? [],
    logger,
    onProgress: (e) => {
      tableCommits?.onProgress(e);
      input.onProgress?.(e);
    },
  }).finally(() => tableCommits?.stop());
  open.committed = outcomes.filter((o) => o.status === 'done').length;
  await afterExport({ state, held, ownership, cleans: ownsMarker(shard, split), repairs, replacements, outcomes, logger });
  const report = Object.assign(reportOf(outcomes, input.signal?.aborted === true), replacements.reported(), open.stop.reported(outcomes));
  if (tableCommits) report.iceberg_commits = await tableCommits.finish();
  return finishReport(report, state, run, logger);
}

/** Settling (src/run/settle.ts) of the completed windows this run owns; nothing to settle with --force. */
function settleRun(
  input: RunJobInput,
  c: Pick<SettleInput, 'job' | 'state' | 'completed' | 'blocks' | 'signal'> & {
    source: SourceSession;
    known: Ownership;
    heads: (chainId: number) => Promise<ChainHead>;
    run: RunIdentity;
    held: Pick<Lease, 'assertHeld'>;
  },
): Promise<{ completed: Map<string, Interval[]>; report: SettleReport }> {
  const horizonS = input.config.source.settleHorizonMs / 1000;
  if (input.force) return Promise.resolve({ completed: c.completed, report: emptySettleReport(horizonS) });
  return settleWindows({
    ...c,
    client: c.source.client,
    owns: c.known.owns,
    horizonS,
    now: c.run.started / 1000,
    head: c.job.range?.to === 'latest' ? c.heads : undefined,
    dryRun: input.dryRun === true,
    logger: input.logger,
    guard: () => c.held.assertHeld(),
  });
}

interface PlanInputs {
  completed: Map<string, Interval[]>;
  /** What state holds (see PlanOptions.exported). */
  exported: Map<string, Interval[]>;
  heads: ReturnType<typeof headFinder>;
  blocks: BlockLookup;
  chains: ChainChecks;
  /** The windows this run exports of the whole job's plan (a shard's share). */
  select: (whole: Plan) => Promise<Plan>;
}

/** The windows left to export (this shard's), as export units; chains and contracts the service does not know are refused first. */
async function planRun(input: RunJobInput, job: Job, p: PlanInputs): Promise<{ plan: Plan; units: ExportUnit[] }> {
  const { completed, exported, heads, blocks, chains } = p;
  const logger = input.logger;
  // The job's options of each dataset (aggregate expressions) are checked before the plan asks the
  // service anything; a target's decoder is built with its first window.
  checkDatasetOptions(job);
  const factory = new TargetFactory(job);
  const plan = await p.select(
    await planJob(job, {
      completed: (unitKey) => completed.get(unitKey) ?? [],
      exported: (unitKey) => exported.get(unitKey) ?? [],
      latest: async (chainId) => {
        const head = await heads(chainId);
        if (head.block !== undefined && head.time !== undefined) blocks.headFound(chainId, head.block, head.time);
        return head;
      },
      serves: (chainId, axis, point) => chains.serves(chainId, axis, point),
    }),
  );
  input.onPlan?.(plan);
  for (const c of plan.clamped)
    logger.warn(
      { chainId: c.chainId, to: c.to, end: c.end, lag: c.to - c.end, lag_unit: plan.axis === 'block' ? 'blocks' : 'seconds' },
      'range.to is past what the service serves (its head minus the safety lag): exporting up to its head now, the rest in later runs as it indexes them',
    );
  const units = await Promise.all(plan.units.map((u) => toExportUnit(u, factory, exported.get(u.unitKey) ?? [])));
  // A chain the service does not serve, or a contract it never saw, answers with empty pages:
  // refuse them before exporting anything (after the job's own checks, which need no request).
  const listed = plan.units.filter((u) => !isSnapshot(u.dataset));
  await chains.checkContracts(contractsOn(listed));
  await chains.checkServed(listed.map((u) => u.chainId));
  // Blocks found on the way bound the search of window edges (no head search below them).
  for (const [chainId, b] of Object.entries(chains.found)) blocks.hint(Number(chainId), b.block, b.time);
  for (const [chainId, seen] of chains.seen) for (const b of seen) blocks.hint(chainId, b.block_number, b.block_timestamp);
  return { plan, units };
}

const contractsOn = (units: { target: WorkUnit['target']; chainId: number }[]) =>
  units.flatMap((u) => (u.target.kind === 'contract' ? [{ contract: u.target.contract, chainId: u.chainId }] : []));

/**
 * The windows state marks done (none with --force, the rewound ones taken out), and each unit's
 * newest completed end before the rewind; a destination holding another format is refused.
 */
async function completedWindows(
  input: RunJobInput,
  job: Job,
  state: WindowState,
  store: ObjectStore,
  known: Ownership,
): Promise<{ completed: Map<string, Interval[]>; listed: Map<string, Interval[]>; frontier: (unitKey: string) => number | undefined }> {
  const done = await state.completedIntervals();
  if (!input.force) {
    const holds = await heldFormat(state, done);
    if (holds && holds !== input.config.output.format)
      throw new DestinationFormatError(store.location, job.name, holds, input.config.output.format);
  }
  let completed = input.force ? new Map<string, Interval[]>() : done;
  if (input.rewind && !input.force) {
    const r = rewindCompleted(done, input.rewind);
    completed = r.completed;
    const mine = r.rewound.filter((x) => x.windows.some((w) => known.owns(x.unitKey, w)));
    const windows = mine.reduce((n, x) => n + x.windows.filter((w) => known.owns(x.unitKey, w)).length, 0);
    if (windows > 0)
      input.logger.info({ rewind: input.rewind.text, units: mine.length, windows }, 'exporting the most recent windows again');
  }
  const frontier = (unitKey: string) => {
    const list = done.get(unitKey);
    return list && list.length > 0 ? Math.max(...list.map((i) => i.end)) : undefined;
  };
  return { completed, listed: done, frontier };
}

/** `cleans`, counting the markers it meets of windows `split` does not cover yet (cleaned once the split covers them). */
function countingUncovered(
  cleans: (unitKey: string, window: Interval | null) => boolean,
  split: ShardSplit | null,
  count: { markers: number },
): (unitKey: string, window: Interval | null) => boolean {
  return (unitKey, window) => {
    if (split && window && ownerOf(split, unitKey, window.start) === null) count.markers++;
    return cleans(unitKey, window);
  };
}

/** Records of a reorganisation check written at once (one small object per unit). */
const CHECKED_WRITES = 16;

interface ReorgRepair {
  job: Job;
  state: WindowState;
  completed: Map<string, Interval[]>;
  /** Each unit's newest completed end before --rewind (what a rewind counts from). */
  frontier: (unitKey: string) => number | undefined;
  /** Whether this run leads a unit: checks its edges, writes its records. */
  owns: (unitKey: string) => boolean;
  /** Whether this run exports a window (a shard: the windows its split gives it). */
  ownsWindow: (unitKey: string, window: Interval) => boolean;
  blocks: BlockLookup;
  logger: Logger;
  dryRun: boolean;
  /** The units under repair (by unit key, their windows); the reorganisations found now are added. */
  repairs: Map<string, { start: number; end: number }[]>;
}

/**
 * Checks the completed windows' edges against the chain (src/state/reorg-check.ts); windows of a
 * reorganisation found now or by an earlier run not yet repaired are taken out of `completed`, to
 * be exported again. What the check found still the chain's is recorded for the next check.
 */
async function repairReorgs(r: ReorgRepair): Promise<{ completed: Map<string, Interval[]>; reorgs: ReorgFound[] }> {
  const range = r.job.range;
  // Windows under repair that another shard exports again are known reorganised: not checked, nor reported, again.
  const awaiting = (unitKey: string, iv: Interval) =>
    (r.repairs.get(unitKey) ?? []).some((w) => w.start === iv.start && w.end === iv.end && !r.ownsWindow(unitKey, w));
  const checked = await checkReorgs({
    state: r.state,
    completed: new Map([...r.completed].map(([unitKey, list]) => [unitKey, list.filter((iv) => !awaiting(unitKey, iv))])),
    frontier: r.frontier,
    owns: r.owns,
    blocks: r.blocks,
    horizon: (chainId) => reorgHorizon(range?.reorg_horizon, chainId),
    logger: r.logger,
  });
  const completed = checked.completed;
  if (!r.dryRun) {
    const at = new Date().toISOString();
    const writes = pLimit(CHECKED_WRITES);
    await Promise.all([...checked.checked].map(([unitKey, c]) => writes(() => r.state.writeChecked(unitKey, { checked_at: at, ...c }))));
  }
  for (const found of checked.reorgs) {
    const earlier = r.repairs.get(found.unit_key) ?? [];
    const windows = [...earlier, ...found.windows.filter((w) => !earlier.some((e) => e.start === w.start && e.end === w.end))];
    if (!r.dryRun) await r.state.writeRepair(found.unit_key, windows);
    r.repairs.set(found.unit_key, windows);
  }
  for (const [unitKey, windows] of r.repairs) {
    const overlaps = (iv: { start: number; end: number }) => windows.some((w) => iv.start < w.end && w.start < iv.end);
    completed.set(
      unitKey,
      (completed.get(unitKey) ?? []).filter((iv: { start: number; end: number }) => !overlaps(iv)),
    );
  }
  return { completed, reorgs: checked.reorgs };
}

interface AfterExport {
  state: WindowState;
  held: Pick<Lease, 'lost' | 'assertHeld'>;
  ownership: Ownership;
  /** Which pending markers this run may clean (see ownsMarker). */
  cleans: (unitKey: string, window: Interval | null) => boolean;
  repairs: Map<string, Interval[]>;
  replacements: Replacements;
  outcomes: { unitKey: string; start: number; end: number; status: string }[];
  logger: Logger;
}

/**
 * Uploads of unfinished windows removed now (not at the next run); the windows under repair this
 * run owns and exported again are taken out of their unit's repair record (the unit's lead deletes
 * a record left empty).
 */
async function afterExport(a: AfterExport): Promise<void> {
  if (!a.held.lost.aborted) {
    await a.state
      .foldCommitted()
      .catch((err: Error) =>
        a.logger.warn({ err: err.message }, "windows not folded into their units' manifests; the next run folds them"),
      );
  }
  if (!a.held.lost.aborted) {
    await a.state
      .cleanPending(a.cleans)
      .catch((err: Error) => a.logger.warn({ err: err.message }, 'uploads of unfinished windows not removed; the next run removes them'));
  }
  if (a.held.lost.aborted) throw a.held.lost.reason;
  await a.replacements
    .settle(a.outcomes.filter((o) => o.status === 'done'))
    .catch((err: Error) =>
      a.logger.warn({ err: err.message }, 'replacement record not removed; the next run finds it done and removes it'),
    );
  for (const [unitKey, windows] of a.repairs) {
    if (!windows.some((w) => a.ownership.owns(unitKey, w)) && !a.ownership.leads(unitKey)) continue;
    const exportedAgain = (w: Interval) =>
      a.ownership.owns(unitKey, w) &&
      !a.outcomes.some((o) => o.unitKey === unitKey && o.start < w.end && w.start < o.end && o.status !== 'done');
    await takeOutRepaired(a.state, unitKey, {
      done: exportedAgain,
      lead: a.ownership.leads(unitKey),
      guard: () => a.held.assertHeld(),
    }).catch((err: Error) =>
      a.logger.warn({ unit: unitKey, err: err.message }, 'repair record not updated; the next run exports its windows again'),
    );
  }
}

/**
 * `output.format: iceberg`: what commits the tables, each time making each table list the state's
 * live files (src/iceberg/). A shard commits too, on top of the other shards' commits.
 */
function icebergCommit(
  iceberg: typeof import('../iceberg/index.js'),
  c: { config: ResolvedConfig; logger: Logger; job: Job; store: ObjectStore; state: WindowState; runId: string; guard?: () => void },
): () => Promise<TableCommitted[]> {
  // The columns with their field ids as the tables' records keep them (recorded before any file), and each table's units.
  const tablesOf = async () => iceberg.committedTables(c.store, c.job.name, await jobTables(c.job));
  let tables: ReturnType<typeof tablesOf> | null = null;
  return async () =>
    iceberg.commitIcebergTables({
      store: c.store,
      state: c.state,
      tables: await (tables ??= tablesOf()),
      partitioning: c.config.output.partitioning,
      compression: c.config.output.compression,
      runId: c.runId,
      logger: c.logger,
      guard: c.guard,
    });
}

/**
 * `run --workers`: the one commit of the job's Iceberg tables once every worker has ended (the
 * workers commit none), under the parent's run id; wallet names are resolved as a run resolves them.
 */
export async function commitTablesAfterWorkers(
  input: Pick<RunJobInput, 'job' | 'config' | 'logger'>,
  runId: string,
): Promise<TableCommitted[]> {
  const iceberg = await import('../iceberg/index.js');
  const store = await openStore(input.config.output.destination!, { s3: input.config.s3, logger: input.logger });
  let source: SourceSession | null = null;
  try {
    source = await openSource(input.config, input.logger);
    const job = await resolveWalletNames(input.job, source.client);
    const state = new WindowState(store, job.name, { runId, dropReplaced: iceberg.keepReplacedFiles });
    return await icebergCommit(iceberg, { ...input, job, store, state, runId })();
  } finally {
    await source?.close();
    await store.close?.();
  }
}

/** The run's report, written beside the state; a run whose record could not be written did not succeed. */
async function finishReport(report: RunReport, state: WindowState, run: RunIdentity, logger: Logger): Promise<RunReport> {
  if (report.empty_units?.length)
    logger.warn({ units: report.empty_units }, 'no rows at all for these units: check their address, signature, filters and range');
  try {
    report.report_key = await state.writeReport(run.runId, report, lastRunName(run.shard));
  } catch (err) {
    // The windows are committed (or not) on their own; only the record of this run is missing, so the caller still gets it.
    // A run whose record is missing did not succeed: exit code and pushed metrics say failed.
    report.report_error = errorMessage(err);
    if (report.status === 'succeeded') report.status = 'failed';
    logger.error({ err: report.report_error }, 'run report not written to the destination');
  }
  return report;
}

/**
 * A run that ends without a window exported withdraws the claims it wrote: it exported nothing of
 * those partitions, and another job (the same one renamed, say) may take them. Never while the
 * job has a completed window at the destination (whatever this run's own count says).
 */
async function withdrawClaims(store: ObjectStore, jobName: string, open: OpenParts, logger: Logger): Promise<void> {
  if (open.claims.length === 0 || open.committed > 0) return;
  const exported = await new WindowState(store, jobName).hasCompleted().catch(() => true);
  if (exported) return;
  await store.deleteMany(open.claims).then(
    () => logger.info({ claims: open.claims.length }, 'nothing exported: partition claims withdrawn'),
    (err: Error) => logger.warn({ err: err.message }, 'partition claims not withdrawn; insight-export release removes them'),
  );
  open.claims = [];
}

/** A dry run holds no lease: it writes nothing a lease would protect. */
function noLease(): Pick<Lease, 'lost' | 'assertHeld'> {
  return { lost: new AbortController().signal, assertHeld: () => undefined };
}

/** A unit's window to export; `held`: the unit's windows the destination holds (is it exported again?). */
async function toExportUnit(u: WorkUnit, factory: TargetFactory, held: Interval[]): Promise<ExportUnit> {
  const target = await factory.forDataset(u);
  const again = held.some((i) => i.start < u.window.end && u.window.start < i.end);
  return {
    dataset: DATASETS[u.dataset],
    target,
    table: TargetFactory.tableName(u, target),
    chainId: u.chainId,
    axis: u.axis,
    start: u.window.start,
    end: u.window.end,
    unitKey: u.unitKey,
    filters: u.filters,
    ...(again ? { again } : {}),
  };
}
