/**
 * Stage 2 of a run, read state: what the destination holds of the job, once what a crashed run left
 * is cleaned and folded, with the windows this run must export again taken out of it (--force,
 * --rewind, --repair, reorganisations, interrupted replacements, counts that differ when settled).
 */
import type { ChainHead, Interval, ShardSplit } from '../plan/index.js';
import { ownerOf } from '../plan/index.js';
import type { Stream } from '../plan/streams.js';
import { BlockLookup } from '../source/block-by-number.js';
import { readKnownHeads } from '../state/chain-heads.js';
import { DestinationFormatError, heldFormat } from '../state/destination-format.js';
import type { ReorgFound } from '../state/reorg-check.js';
import { Replacements } from '../state/replacement-record.js';
import { rewindCompleted } from '../state/rewind.js';
import { readShardSplit } from '../state/shard-split-record.js';
import type { WindowState } from '../state/window-state.js';
import { ChainChecks, headFinder } from './chains.js';
import type { OpenedRun } from './open-run.js';
import { withoutDamagedWindows } from './repair.js';
import { repairReorgs } from './reorg-repair.js';
import type { RunContext } from './run-context.js';
import { emptySettleReport, settleWindows, type SettleReport } from './settle.js';
import { ownershipOf, ownsMarker, type Ownership } from './shard.js';
import type { UnreferencedFound } from './unreferenced-check.js';

/** What the read-state stage hands the plan. */
export interface StateRead {
  /** The completed windows this run does not export again, by unit key. */
  readonly completed: Map<string, Interval[]>;
  /** Every completed window state holds, before any was taken out (what the plan exports whole again). */
  readonly listed: Map<string, Interval[]>;
  /** The split recorded at the destination (a shard), before this run divides what it does not cover. */
  readonly recorded: ShardSplit | null;
  /** Ownership from the recorded split. */
  readonly known: Ownership;
  /** Markers met that the recorded split does not cover yet (cleaned once the split covers them). */
  readonly uncovered: number;
  readonly chains: ChainChecks;
  readonly heads: (chainId: number) => Promise<ChainHead>;
  readonly blocks: BlockLookup;
  /** The units under repair, by unit key: their windows. */
  readonly repairs: Map<string, Interval[]>;
  readonly reorgs: ReorgFound[];
  readonly replacements: Replacements;
  readonly settle: SettleReport;
  /** run --repair: files no state names. */
  readonly unreferenced: UnreferencedFound | null;
}

export async function readState(ctx: RunContext, o: OpenedRun): Promise<StateRead> {
  const { input, run, store } = ctx;
  const { config, logger } = input;
  const { job, state, held } = o;
  const dryRun = input.dryRun === true;
  // A shard's windows are those the recorded split gives it; the windows it does not cover yet are divided once planned.
  const recorded = run.shard ? (await readShardSplit(store, job.name, run.shard.count)).split : null;
  const known = ownershipOf(run.shard, recorded);
  const uncovered = dryRun ? 0 : await recoverState(state, ownsMarker(run.shard, recorded), logger, recorded);
  const done = await completedWindows(ctx, state, known);
  let completed = done.completed;
  const chains = new ChainChecks(job, o.source.client, await readKnownHeads(store, job.name), logger);
  // Before the head search of `to: latest` (whose hints resolve the targets): an unknown contract is the precise cause.
  if (job.range?.to === 'latest') await chains.checkContracts(contractsOf(o.streams));
  const heads = headFinder(chains);
  const blocks = new BlockLookup(o.source.client, heads);
  let unreferenced: UnreferencedFound | null = null;
  // run --repair: damaged windows (files gone or changed, rows short of the service's count) are exported again.
  if (input.repair && !input.force)
    ({ completed, unreferenced } = await withoutDamagedWindows(completed, {
      ...{ job, store, client: o.source.client, output: config.output, owns: known.owns, remove: o.remove, logger },
    }));
  // Units under repair: the windows an earlier run found reorganised and not all exported again (by their owners, when sharded).
  const repairs = await state.pendingRepairs();
  let reorgs: ReorgFound[] = [];
  if (!input.force)
    ({ completed, reorgs } = await repairReorgs({
      ...{ job, state, completed, frontier: done.frontier, owns: known.leads, ownsWindow: known.owns },
      ...{ blocks, logger, dryRun, repairs },
    }));
  // Replacements a run began and did not finish (stopped, killed) are finished now, whatever the flags.
  const replacements = new Replacements(state, {
    ...{ logger, guard: () => held.assertHeld(), write: !dryRun, runId: run.runId, shard: run.shard },
  });
  completed = await replacements.resume(completed, done.listed);
  // Windows of earlier runs not settled yet are recounted; those whose count differs are exported again.
  const settled = await settleRun(ctx, o, { completed, known, heads, blocks });
  return {
    ...{ completed: settled.completed, listed: done.listed, recorded, known, uncovered, chains, heads, blocks },
    ...{ repairs, reorgs, replacements, settle: settled.report, unreferenced },
  };
}

/**
 * The read-state stage of `plan`, read only: what the destination holds, with the windows of a
 * replacement a run began and did not finish taken out as the next run takes them out. No fold and
 * no clean (they write), and neither reorganisations nor settling are checked (their requests are
 * the run's; `plan --json`'s `settle` names the windows the next run recounts).
 */
export async function readStateReadOnly(ctx: RunContext, o: OpenedRun): Promise<StateRead> {
  const { input, run, store } = ctx;
  const { job, state, held } = o;
  const recorded = run.shard ? (await readShardSplit(store, job.name, run.shard.count)).split : null;
  const listed = await state.completedIntervals();
  const replacements = new Replacements(state, {
    ...{ logger: input.logger, guard: () => held.assertHeld(), write: false, runId: run.runId, shard: null },
  });
  const completed = await replacements.resume(listed, listed);
  const chains = new ChainChecks(job, o.source.client, await readKnownHeads(store, job.name));
  const heads = headFinder(chains);
  return {
    ...{ completed, listed, recorded, known: ownershipOf(run.shard, recorded), uncovered: 0, chains, heads },
    ...{ blocks: new BlockLookup(o.source.client, heads), repairs: new Map(), reorgs: [], replacements, unreferenced: null },
    settle: emptySettleReport(input.config.source.settleHorizonMs / 1000),
  };
}

/** The contracts of the streams, by chain. */
export const contractsOf = (streams: readonly Pick<Stream, 'target' | 'chainId'>[]) =>
  streams.flatMap((u) => (u.target.kind === 'contract' ? [{ contract: u.target.contract, chainId: u.chainId }] : []));

/**
 * The fold-and-clean pass: uploads of windows a previous run did not complete removed, and the
 * completed windows an earlier run committed and did not fold (a crash, or a destination of an
 * older version) folded into their units' manifests; only the markers `owns` names. Returns how many
 * markers `split` (a shard's) does not cover yet: those are left to the pass once the plan covers them.
 */
export async function recoverState(
  state: WindowState,
  owns: (unitKey: string, window: Interval | null) => boolean,
  logger: RunContext['input']['logger'],
  split: ShardSplit | null = null,
): Promise<number> {
  let uncovered = 0;
  const counting = (unitKey: string, window: Interval | null) => {
    if (split && window && ownerOf(split, unitKey, window.start) === null) uncovered++;
    return owns(unitKey, window);
  };
  const orphans = await state.cleanPending(counting);
  if (orphans.length > 0) logger.warn({ files: orphans.length }, 'removed files of windows a previous run did not complete');
  const folded = await state.foldMarkers(counting);
  if (folded > 0) logger.info({ windows: folded }, "completed windows folded into their units' manifests");
  return uncovered;
}

/**
 * The windows state marks done (none with --force, the rewound ones taken out), and each unit's
 * newest completed end before the rewind; a destination holding another format is refused.
 */
async function completedWindows(
  ctx: RunContext,
  state: WindowState,
  known: Ownership,
): Promise<{ completed: Map<string, Interval[]>; listed: Map<string, Interval[]>; frontier: (unitKey: string) => number | undefined }> {
  const { input, store } = ctx;
  const done = await state.completedIntervals();
  if (!input.force) {
    const holds = await heldFormat(state, done);
    if (holds && holds !== input.config.output.format)
      throw new DestinationFormatError(store.location, input.job.name, holds, input.config.output.format);
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

/** Settling (src/run/settle.ts) of the completed windows this run owns; nothing to settle with --force. */
function settleRun(
  ctx: RunContext,
  o: OpenedRun,
  c: { completed: Map<string, Interval[]>; known: Ownership; heads: (chainId: number) => Promise<ChainHead>; blocks: BlockLookup },
): Promise<{ completed: Map<string, Interval[]>; report: SettleReport }> {
  const { input, run } = ctx;
  const horizonS = input.config.source.settleHorizonMs / 1000;
  if (input.force) return Promise.resolve({ completed: c.completed, report: emptySettleReport(horizonS) });
  return settleWindows({
    ...{ job: o.job, state: o.state, completed: c.completed, blocks: c.blocks, signal: o.signal },
    client: o.source.client,
    owns: c.known.owns,
    horizonS,
    now: run.started / 1000,
    head: o.job.range?.to === 'latest' ? c.heads : undefined,
    dryRun: input.dryRun === true,
    logger: input.logger,
    guard: () => o.held.assertHeld(),
  });
}
