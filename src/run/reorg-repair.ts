/**
 * The reorganisation check of a run's read-state stage: the completed windows' edges checked
 * against the chain (src/state/reorg-check.ts); windows of a reorganisation found now or by an
 * earlier run not yet repaired are taken out of `completed`, to be exported again.
 */
import pLimit from 'p-limit';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { BlockLookup } from '../source/block-by-number.js';
import { checkReorgs, reorgHorizon, type ReorgFound } from '../state/reorg-check.js';
import type { WindowState } from '../state/window-state.js';

/** Records of a reorganisation check written at once (one small object per unit). */
const CHECKED_WRITES = 16;

export interface ReorgRepair {
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
export async function repairReorgs(r: ReorgRepair): Promise<{ completed: Map<string, Interval[]>; reorgs: ReorgFound[] }> {
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
