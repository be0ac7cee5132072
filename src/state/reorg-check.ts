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
 *
 * The fork is then placed within the lowest changed window of each chain: the rows exported there
 * carry the hashes of their blocks, and since a replaced block replaces every block above it,
 * bisecting those blocks (one request each, ~log2 of the window's blocks) finds the lowest block
 * whose rows were replaced and the highest whose rows were not. The depth is exact when the two
 * are adjacent; otherwise the blocks between held none of the job's rows.
 */
import { InsightExportError } from '../errors.js';
import { isSnapshotUnitKey } from '../datasets/index.js';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { WindowState } from './window-state.js';
import { readBlockHashes } from './exported-files.js';

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
  /**
   * The newest block known unchanged (a recorded edge, or a block of the chain's exported rows): the
   * fork is above it (null: none within reach matched).
   */
  fork_after_block: number | null;
  /** The lowest block known replaced (a recorded edge, or a block of the chain's exported rows). */
  first_changed_block: number;
  /** The newest exported block of the unit (the newest window's edge). */
  newest_block: number;
  /** Blocks known replaced: first_changed_block to newest_block. */
  depth: number;
  /** Blocks that may have been replaced: fork_after_block + 1 to newest_block. */
  depth_at_most: number;
  /** depth is the reorganisation's depth: no block lies between fork_after_block and first_changed_block. */
  depth_exact: boolean;
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
  const searches: ForkSearch[] = [];
  for (const [unitKey, intervals] of input.completed) {
    const { chainId, axis } = unitChain(unitKey);
    if ((axis !== 'block' && axis !== 'time') || isSnapshotUnitKey(unitKey) || !input.owns(unitKey) || intervals.length === 0) continue;
    const horizon = input.horizon(chainId);
    const sorted = [...intervals].sort((a, b) => a.start - b.start);
    let newest: number | null = null;
    let forkAfter: number | null = null;
    const changed: ReorgFound['changed_edges'] = [];
    const again: Interval[] = [];
    let lowestChangedFiles: string[] = [];
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
      lowestChangedFiles = record.files.map((f) => f.key);
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
    again.reverse();
    searches.push({
      found: {
        unit_key: unitKey,
        chain_id: chainId,
        fork_after_block: forkAfter,
        first_changed_block: changed.at(-1)!.block_number,
        newest_block: newest!,
        depth: 0,
        depth_at_most: 0,
        depth_exact: false,
        changed_edges: changed,
        windows: again,
      },
      files: lowestChangedFiles,
    });
    out.set(
      unitKey,
      intervals.filter((iv) => !again.some((a) => a.start === iv.start && a.end === iv.end)),
    );
  }
  if (tooDeep.length > 0) {
    throw new ReorgBeyondHorizonError('A chain reorganisation reaches deeper than the reorg horizon: nothing was exported', {
      metaMessages: tooDeep.map((t) => t.text),
      hint: `Export the windows again with --rewind ${tooDeep.reduce((a, t) => (t.rewind.amount > a.amount ? t.rewind : a), tooDeep[0]!.rewind).text} or more (or raise range.reorg_horizon), then check with verify --chain-hashes.`,
    });
  }
  for (const chainId of new Set(searches.map((x) => x.found.chain_id))) {
    const ofChain = searches.filter((x) => x.found.chain_id === chainId);
    const fork = await placeFork(input, chainId, ofChain);
    for (const { found } of ofChain) {
      found.fork_after_block = fork.after;
      found.first_changed_block = fork.firstChanged;
      found.depth = found.newest_block - fork.firstChanged + 1;
      found.depth_at_most = fork.after === null ? found.depth : found.newest_block - fork.after;
      found.depth_exact = fork.after !== null && fork.firstChanged === fork.after + 1;
      reorgs.push(found);
      input.logger.warn(
        {
          chain: chainId,
          unit: found.unit_key,
          fork_after_block: found.fork_after_block,
          first_changed_block: found.first_changed_block,
          depth: found.depth,
          depth_exact: found.depth_exact,
          windows: found.windows.length,
        },
        'reorganisation found: exporting the replaced windows again',
      );
    }
  }
  return { completed: out, reorgs };
}

/** A unit found reorganised, and the files of its lowest changed window (where the fork is). */
interface ForkSearch {
  found: ReorgFound;
  files: string[];
}

/**
 * The fork of one chain, between the highest block known unchanged and the lowest known replaced:
 * first the units' recorded edges, then the blocks of the rows exported between them, bisected.
 */
async function placeFork(
  input: ReorgCheckInput,
  chainId: number,
  searches: ForkSearch[],
): Promise<{ after: number | null; firstChanged: number }> {
  const afters = searches.map((x) => x.found.fork_after_block).filter((b): b is number => b !== null);
  let after = afters.length > 0 ? Math.max(...afters) : null;
  let firstChanged = Math.min(...searches.map((x) => x.found.first_changed_block));
  const rows = await readBlockHashes(input.state.store, [...new Set(searches.flatMap((x) => x.files))]);
  const between = [...rows.hashes.keys()].filter((b) => (after === null || b > after) && b < firstChanged).sort((a, b) => a - b);
  let lo = 0;
  let hi = between.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const n = between[mid]!;
    const now = await input.blocks.block(chainId, n);
    if (now?.block_hash === rows.hashes.get(n)!.hash) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0) after = between[lo - 1]!;
  if (lo < between.length) firstChanged = between[lo]!;
  return { after, firstChanged };
}
