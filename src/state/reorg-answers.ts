/**
 * The reorganisation check's answers (src/state/reorg-check.ts), which may come from a replica
 * behind or a cache from before a reorganisation:
 * - an edge the service no longer serves is asked again (BlockLookup.confirmedBlock): a replica
 *   behind the one that served it is not a reorganisation; it ends the run (exit 1) when it stays
 *   missing. A changed edge deeper than the horizon (which ends the run with exit 2) is asked once
 *   more: two answers must agree on it (replicas that disagree end it with exit 1);
 * - once the check found a change, a matching edge counts only when the service knows the block by
 *   its hash (resolve/<hash>): the one that bounds the fork, asked as the walk reaches it, and any
 *   above the change (oldBranchAnswers). An old-branch answer kept for the number's URL taken for
 *   a match would leave its window, and once recorded as still the chain's the windows below it,
 *   on the old branch for good.
 */
import type { Interval } from '../plan/index.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { ReorgFound } from './reorg-check.js';
import type { BlockEdge } from './window-state.js';

/**
 * A recorded edge asked again: whether it still matches, and the service's hash when it does not
 * (null: not known). `below`: deeper than the horizon; `changeFound`: the check found a change
 * already; `what` names the window for errors.
 */
export async function askEdge(
  blocks: BlockLookup,
  chainId: number,
  edge: BlockEdge,
  below: boolean,
  changeFound: boolean,
  what: string,
): Promise<{ same: boolean; serviceHash: string | null }> {
  let now = await blocks.block(chainId, edge.block_number);
  if (!now || (below && now.block_hash !== edge.block_hash))
    now = await blocks.confirmedBlock(chainId, edge.block_number, edge.block_hash, what);
  if (now.block_hash !== edge.block_hash) return { same: false, serviceHash: now.block_hash };
  const same = !changeFound || (await blocks.isCurrent(chainId, edge));
  return { same, serviceHash: null };
}

/**
 * Once the check found an edge changed, an edge that matched above it is either a window exported
 * after the reorganisation (of the new branch) or an answer of the old branch (a cache from before
 * it, a replica behind): the service must know it by its hash, else its window is exported again
 * too and not recorded as still the chain's. `again` stays newest first.
 */
export async function oldBranchAnswers(
  blocks: BlockLookup,
  chainId: number,
  matched: { w: Interval; edge: BlockEdge }[],
  again: Interval[],
  changed: ReorgFound['changed_edges'],
): Promise<void> {
  const lowest = Math.min(...changed.map((c) => c.block_number));
  const above = matched.filter((m) => m.edge.block_number > lowest);
  const current = await Promise.all(above.map((m) => blocks.isCurrent(chainId, m.edge)));
  const stale = above.filter((_, i) => !current[i]);
  if (stale.length === 0) return;
  matched.splice(0, matched.length, ...matched.filter((m) => !stale.includes(m)));
  again.push(...stale.map((m) => m.w));
  again.sort((a, b) => b.start - a.start);
}
