/**
 * Reorganisations found and repaired at the start of every run. Each completed block window
 * records the hash of the chain's block at its upper edge (WindowRecord.edge); a block's hash
 * commits to every block below it, so when the service now has another hash at that number, some
 * block at or below the edge was replaced.
 *
 * Per unit, the newest completed window's edge is asked again (`resolve/<number>`, cached per
 * block, so units of a chain sharing their newest edge cost one request per chain). When it
 * changed, older windows' edges are asked one by one, newest first, until one still matches: the
 * fork lies above that edge, and every window above it is exported again through the replacement
 * protocol (WindowState). A changed edge more than the horizon below the newest exported block is
 * not repaired: the run fails and names the range to export again (`--rewind`).
 */
import { InsightExportError } from '../errors.js';
import { isSnapshotUnitKey } from '../datasets/index.js';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { WindowState } from './window-state.js';

/**
 * Reorganisation horizon in blocks by chain id, when the job does not set range.reorg_horizon:
 * a few times the depth at which each chain's blocks are final (or its deepest reorganisations
 * seen), so what a run must still repair is covered and older windows cost nothing.
 */
export const DEFAULT_REORG_HORIZONS: Readonly<Record<number, number>> = {
  1: 128, // Ethereum: final after 2 epochs (64 blocks)
  10: 64, // OP Mainnet, Base, Arbitrum: a sequencer's order, rarely reorganised
  8453: 64,
  42161: 64,
  56: 64, // BNB Smart Chain: fast finality within a few blocks
  43114: 16, // Avalanche C-Chain: final on acceptance
  137: 512, // Polygon PoS: reorganisations over 100 blocks deep were seen before its fast finality
};
/** Other chains: a few hundred blocks. */
export const DEFAULT_REORG_HORIZON = 256;

export function reorgHorizon(setting: number | Record<string, number> | undefined, chainId: number): number {
  if (typeof setting === 'number') return setting;
  return setting?.[String(chainId)] ?? DEFAULT_REORG_HORIZONS[chainId] ?? DEFAULT_REORG_HORIZON;
}

/** A reorganisation found under one unit's windows. */
export interface ReorgFound {
  unit_key: string;
  chain_id: number;
  /** The newest recorded edge whose block is unchanged: the fork is above it (null: none within reach matched). */
  fork_after_block: number | null;
  /** The newest exported block of the unit (the newest window's edge). */
  newest_block: number;
  /** Blocks that may have been replaced: from fork_after_block + 1 to newest_block (the depth is at most this). */
  depth_at_most: number;
  /** Recorded edges whose block changed. */
  changed_edges: { block_number: number; recorded_hash: string; service_hash: string | null }[];
  /** The completed windows exported again. */
  windows: Interval[];
}

/** A reorganisation reaching below the horizon: not repaired on its own. */
export class ReorgBeyondHorizonError extends InsightExportError {
  override name = 'ReorgBeyondHorizonError';
}

export interface ReorgCheckInput {
  state: WindowState;
  /** Completed intervals per unit key; the result leaves out the windows to export again. */
  completed: ReadonlyMap<string, Interval[]>;
  owns: (unitKey: string) => boolean;
  blocks: BlockLookup;
  horizon: (chainId: number) => number;
  logger: Logger;
}

function describeWindow(w: Interval, axis: string): string {
  if (axis !== 'time') return `[${w.start}, ${w.end})`;
  const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
  return `[${iso(w.start)}, ${iso(w.end)})`;
}

/** Unit keys are `dataset/target/chain_id/axis`. */
function unitChain(unitKey: string): { chainId: number; axis: string } {
  const parts = unitKey.split('/');
  return { chainId: Number(parts.at(-2)), axis: parts.at(-1)! };
}

export async function checkReorgs(input: ReorgCheckInput): Promise<{ completed: Map<string, Interval[]>; reorgs: ReorgFound[] }> {
  const out = new Map(input.completed);
  const reorgs: ReorgFound[] = [];
  const tooDeep: { text: string; rewind: { amount: number; text: string } }[] = [];
  for (const [unitKey, intervals] of input.completed) {
    const { chainId, axis } = unitChain(unitKey);
    if ((axis !== 'block' && axis !== 'time') || isSnapshotUnitKey(unitKey) || !input.owns(unitKey) || intervals.length === 0) continue;
    const horizon = input.horizon(chainId);
    const sorted = [...intervals].sort((a, b) => a.start - b.start);
    let newest: number | null = null;
    let forkAfter: number | null = null;
    const changed: ReorgFound['changed_edges'] = [];
    const again: Interval[] = [];
    for (let i = sorted.length - 1; i >= 0; i--) {
      const record = await input.state.readCompleted(unitKey, sorted[i]!.start, sorted[i]!.end);
      const edge = record?.edge;
      if (!edge) break; // written by an older version: nothing to compare with
      newest ??= edge.block_number;
      const now = await input.blocks.block(chainId, edge.block_number);
      if (now?.block_hash === edge.block_hash) {
        forkAfter = edge.block_number;
        break;
      }
      changed.push({ block_number: edge.block_number, recorded_hash: edge.block_hash, service_hash: now?.block_hash ?? null });
      again.push(sorted[i]!);
      if (newest - edge.block_number > horizon) {
        const w = sorted[i]!;
        const frontier = sorted.at(-1)!.end;
        // Reaches this window and the one below it (whose edge was not asked), in the unit's own axis.
        const amount = frontier - w.start + (w.end - w.start);
        tooDeep.push({
          text:
            `chain ${chainId}, ${unitKey}: block ${edge.block_number} (edge of window ${describeWindow(w, axis)}) changed, ` +
            `${newest - edge.block_number} blocks below the newest exported block ${newest} (horizon ${horizon})`,
          rewind: { amount, text: axis === 'time' ? `${amount}s` : String(amount) },
        });
        break;
      }
    }
    if (again.length === 0) continue;
    const found: ReorgFound = {
      unit_key: unitKey,
      chain_id: chainId,
      fork_after_block: forkAfter,
      newest_block: newest!,
      depth_at_most: forkAfter === null ? newest! - changed.at(-1)!.block_number + 1 : newest! - forkAfter,
      changed_edges: changed,
      windows: again.reverse(),
    };
    reorgs.push(found);
    out.set(
      unitKey,
      intervals.filter((iv) => !again.some((a) => a.start === iv.start && a.end === iv.end)),
    );
    input.logger.warn(
      { chain: chainId, unit: unitKey, fork_after_block: forkAfter, depth_at_most: found.depth_at_most, windows: again.length },
      'reorganisation found: exporting the replaced windows again',
    );
  }
  if (tooDeep.length > 0) {
    throw new ReorgBeyondHorizonError('A chain reorganisation reaches deeper than the reorg horizon: nothing was exported', {
      metaMessages: tooDeep.map((t) => t.text),
      hint: `Export the windows again with --rewind ${tooDeep.reduce((a, t) => (t.rewind.amount > a.amount ? t.rewind : a), tooDeep[0]!.rewind).text} or more (or raise range.reorg_horizon), then check with verify --chain-hashes.`,
    });
  }
  return { completed: out, reorgs };
}
