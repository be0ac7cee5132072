/**
 * Stage 3 of a run, plan: the one immutable plan of the run, made once from what the open and
 * read-state stages found: the windows to export (this shard's share), as windows to export with their
 * built targets and tables, the shard split and ownership, the tables' columns settled against the
 * destination, the service's heads. The export, commit and report stages read it and change nothing.
 */
import { DATASETS, isSnapshot } from '../datasets/index.js';
import {
  planJob,
  shardLoads,
  type ExpectedRows,
  type Interval,
  type Plan,
  type ShardLoad,
  type ShardSplit,
  type PlannedWindow,
} from '../plan/index.js';
import { settleShardSplit } from '../state/shard-split-record.js';
import type { SettledColumns } from '../state/table-columns.js';
import { expectedRowsFrom, unitDensities } from '../state/stream-densities.js';
import type { ServiceHead } from './chains.js';
import type { ExportWindow } from './export-windows.js';
import type { OpenedRun } from './open-run.js';
import { contractsOf, recoverState, type StateRead } from './read-state.js';
import type { RunContext } from './run-context.js';
import { ownershipOf, ownsMarker, planForShard, type Ownership } from './shard.js';
import { checkJobTableQueries, jobTables, settleTableColumns } from './tables.js';
import { TargetFactory } from './targets.js';
import { checkUnreferencedBeforeExport, type UnreferencedFound } from './unreferenced-check.js';

/** The run's plan: made once by planRun, read by every later stage. */
export interface RunPlan {
  /** The windows this run exports (a shard's share of the whole job's). */
  readonly plan: Plan;
  /** The same windows as windows to export: dataset module, built target, table. */
  readonly units: readonly ExportWindow[];
  /** A shard's split of the job's windows (null: not sharded). */
  readonly split: ShardSplit | null;
  /** What each shard exports (a sharded run). */
  readonly balance: readonly ShardLoad[] | null;
  readonly ownership: Ownership;
  /** The tables' columns as the destination records them. */
  readonly columns: SettledColumns;
  readonly serviceHeads: readonly ServiceHead[];
  /** Files no state names (a first run's check, or run --repair's). */
  readonly unreferenced: UnreferencedFound | null;
}

export async function planRun(ctx: RunContext, o: OpenedRun, s: StateRead): Promise<RunPlan> {
  const { input, run, store } = ctx;
  const { config, logger } = input;
  const { job, state } = o;
  const dryRun = input.dryRun === true;
  const sharding: { split: ShardSplit | null; balance: ShardLoad[] | null } = { split: null, balance: null };
  const { plan, units } = await planWindows(ctx, o, s, async (whole) => {
    if (!run.shard) return whole;
    const share = await divideWindows(ctx, o, s, whole);
    Object.assign(sharding, share);
    return planForShard(whole, run.shard, share.split);
  });
  const { split } = sharding;
  // Markers of windows the recorded split did not cover are this shard's to clean up or fold once the split gives them to it.
  if (s.uncovered > 0 && !dryRun) await recoverState(state, ownsMarker(run.shard, split), logger);
  // A table keeps the columns it was first written with: an edited job is refused before it writes a
  // file (an Iceberg table may gain columns, their field ids recorded before its first file).
  // Checked whether or not the run has windows to export (an edit a later run would refuse is refused
  // now, not when new data arrives); the tables' columns come without building a decoder (viem).
  const tables = await jobTables(job);
  const columns = await settleTableColumns(store, job, tables, config.output.format);
  // ... and, for each window of a target, the query it was first exported with.
  await checkJobTableQueries(state, job, tables, { completed: s.listed, planned: units }, config.output.partitioning);
  const serviceHeads = await s.chains.serviceHeads(run.started / 1000);
  for (const h of serviceHeads)
    logger.info(
      { chain: h.chain_id, block: h.block, block_time: h.time, exact: h.exact, behind_clock_s: h.behind_clock_s },
      'service head',
    );
  // A job whose state is empty (a first run, or _state/ lost): files of its windows already there refuse the run.
  const unreferenced =
    !o.iceberg && s.listed.size === 0 && units.length > 0
      ? await checkUnreferencedBeforeExport({
          ...{ store, state, job, partitioning: config.output.partitioning, units, remove: o.remove, logger },
        })
      : s.unreferenced;
  return Object.freeze({
    plan,
    units,
    split,
    balance: sharding.balance,
    ownership: ownershipOf(run.shard, split),
    columns,
    serviceHeads,
    unreferenced,
  });
}

/**
 * A shard's split of the job's windows, settled at the destination: completed windows first, in
 * spans of their own (a destination exported before it was sharded), so every window has an owner
 * and the windows to export are divided by themselves (src/state/shard-split-record.ts).
 */
async function divideWindows(
  ctx: RunContext,
  o: OpenedRun,
  s: StateRead,
  whole: Plan,
): Promise<{ split: ShardSplit; balance: ShardLoad[] }> {
  const { input, run, store } = ctx;
  const count = run.shard!.count;
  const write = input.dryRun !== true;
  const guard = () => o.held.assertHeld();
  const densities = { rows: null as ExpectedRows | null };
  const listed = [...s.listed].flatMap(([unitKey, list]) => list.map((window) => ({ unitKey, window })));
  await settleShardSplit(store, o.job.name, count, { units: listed }, { write, guard });
  const split = await settleShardSplit(store, o.job.name, count, whole, {
    write,
    expected: async (unitKeys) =>
      (densities.rows = expectedRowsFrom(await unitDensities(o.state, new Map(unitKeys.map((k) => [k, s.listed.get(k) ?? []]))))),
    guard,
  });
  // A dry run (and `plan`) shows each shard's expected rows, a split recorded already or not.
  if (!write && densities.rows === null) densities.rows = expectedRowsFrom(await unitDensities(o.state, s.listed));
  return { split, balance: shardLoads(whole, split, densities.rows ?? undefined) };
}

/** The windows left to export (this shard's), as windows to export; chains and contracts the service does not know are refused first. */
async function planWindows(
  ctx: RunContext,
  o: OpenedRun,
  s: StateRead,
  select: (whole: Plan) => Promise<Plan>,
): Promise<{ plan: Plan; units: ExportWindow[] }> {
  const { input } = ctx;
  const { job } = o;
  const { completed, listed, heads, blocks, chains } = s;
  // The job's options of each dataset (aggregate expressions) were checked before the lease
  // (src/run/job-refusals.ts); a target's decoder is built with its first window.
  const factory = new TargetFactory(job);
  const plan = await select(
    await planJob(job, {
      completed: (unitKey) => completed.get(unitKey) ?? [],
      exported: (unitKey) => listed.get(unitKey) ?? [],
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
    input.logger.warn(
      { chainId: c.chainId, to: c.to, end: c.end, lag: c.to - c.end, lag_unit: plan.axis === 'block' ? 'blocks' : 'seconds' },
      'range.to is past what the service serves (its head minus the safety lag): exporting up to its head now, the rest in later runs as it indexes them',
    );
  const units = await Promise.all(plan.units.map((u) => toExportWindow(u, factory, listed.get(u.unitKey) ?? [])));
  // A chain the service does not serve, or a contract it never saw, answers with empty pages:
  // refuse them before exporting anything (after the job's own checks, which need no request).
  const streams = plan.units.filter((u) => !isSnapshot(u.dataset));
  await chains.checkContracts(contractsOf(streams));
  await chains.checkServed(streams.map((u) => u.chainId));
  // Blocks found on the way bound the search of window edges (no head search below them).
  for (const [chainId, b] of Object.entries(chains.found)) blocks.hint(Number(chainId), b.block, b.time);
  for (const [chainId, seen] of chains.seen) for (const b of seen) blocks.hint(chainId, b.block_number, b.block_timestamp);
  return { plan, units };
}

/** A unit's window to export; `held`: the unit's windows the destination holds (is it exported again?). */
async function toExportWindow(u: PlannedWindow, factory: TargetFactory, held: Interval[]): Promise<ExportWindow> {
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
