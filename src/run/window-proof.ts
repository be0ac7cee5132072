/**
 * What a window's rows are checked against before it commits (src/source/bad-answers.ts):
 * - its edge block, read before the rows (`windowEdges`): the service must serve it (and, for a
 *   window exported again, know it by its hash: no answer of another branch kept for the number's
 *   URL by a cache becomes its edge). A block the
 *   service denies while it served blocks below and above is asked again and fails the window
 *   (EdgeNotServedError, exit 1) when it stays missing; a block it denies with no served block
 *   below (before its first block) leaves the window without an edge, which only a window without
 *   rows may commit (`edgeProblem`). A window is never committed with rows and no edge, so the
 *   reorganisation check and `verify --chain-hashes` can always ask its edge again.
 * - every row (`rowCheck`): no later than the edge block (a timestamp in milliseconds, a block
 *   after a time window's edge), and at a block the run resolved, that block's hash and time (an
 *   answer of another branch: a cache from before a reorganisation).
 * - the limit of a window exported again (`pagingLimit`): keyed by its edge's hash, so its
 *   requests are not the URLs an earlier export of another branch sent (a cache keyed by URL
 *   cannot answer them with that branch's rows).
 */
import { sameHex } from '../datasets/dataset.js';
import { EdgeNotServedError, type BlockLookup } from '../source/block-by-number.js';
import type { BadAnswer } from '../source/bad-answers.js';
import type { BlockRecord } from '../source/records.js';
import type { ExportWindow } from './export-windows.js';
import type { BlockEdge } from '../state/window-state.js';

/**
 * Each chain's edge block: undefined when none is asked (snapshot datasets, no block lookup), null
 * when the service has none there (before its first block).
 */
export type WindowEdges = Map<number, BlockRecord | null | undefined>;

/** No timestamp in seconds reaches this (the year 5138): a larger one is in milliseconds. */
const MAX_SECONDS = 1e11;

/**
 * The chain's block at each unit's upper edge. Read before the rows: a reorganisation between the
 * two then shows as a changed edge at the next run (and is repaired), never as an edge that
 * matches stale rows.
 */
export async function windowEdges(group: ExportWindow[], blocks: BlockLookup | undefined): Promise<WindowEdges> {
  const edges: WindowEdges = new Map();
  const first = group[0]!;
  if (!blocks || first.dataset.capabilities.extent === 'snapshot') return edges;
  await Promise.all(
    group.map(async (u) => {
      const b = first.axis === 'block' ? await blocks.servedBlock(u.chainId, u.end - 1) : await blocks.lastBlockBefore(u.chainId, u.end);
      // A window exported again reads the branch it repairs: its edge is confirmed by its hash.
      edges.set(u.chainId, b && u.again ? await blocks.confirmedByHash(u.chainId, b) : b);
    }),
  );
  return edges;
}

/**
 * The edge a chain's window commits with (its block number and hash); EdgeNotServedError when it
 * has rows and the service denied its edge block (a window is never committed with rows and no edge).
 */
export function edgeToCommit(u: ExportWindow, edges: WindowEdges, rows: number, blocks: BlockLookup | undefined): BlockEdge | undefined {
  const b = edges.get(u.chainId);
  if (b === null && rows > 0) {
    const edge = u.axis === 'block' ? `block ${u.end - 1}` : `block before ${new Date(u.end * 1000).toISOString()}`;
    throw new EdgeNotServedError(u.chainId, edge, blocks?.servedSpan(u.chainId), rows);
  }
  return b ? { block_number: b.block_number, block_hash: b.block_hash } : undefined;
}

/**
 * Why a row of the window's chains cannot be in any answer for it (see the file comment), or null.
 * `blocks` are the blocks the run resolved.
 */
export function rowCheck(
  group: ExportWindow[],
  edges: WindowEdges,
  blocks: BlockLookup | undefined,
): (rec: unknown) => 'implausible' | 'block_hash' | null {
  const ds = group[0]!.dataset;
  return (rec) => {
    const p = ds.position(rec);
    const chainId = ds.chainId(rec);
    const edge = edges.get(chainId);
    if (p.block_timestamp >= (edge?.block_timestamp ?? MAX_SECONDS) + (edge ? 1 : 0)) return 'implausible';
    if (edge && p.block_number > edge.block_number) return 'implausible';
    const known = blocks?.resolvedBlock(chainId, p.block_number);
    if (
      known &&
      typeof p.block_hash === 'string' &&
      (!sameHex(p.block_hash, known.block_hash) || p.block_timestamp !== known.block_timestamp)
    )
      return 'block_hash';
    return null;
  };
}

/**
 * Before a window's answer is asked again for a row of another branch: the row's block may be the
 * current one and the run's the stale answer (a cached or lagging resolve of its number). When the
 * service knows the row's hash as that block, the run adopts it (the window's edge too, when it is
 * that block), so the answers of the current branch prove the window; else the answer is asked again.
 */
export function recheckBlocks(group: ExportWindow[], edges: WindowEdges, blocks: BlockLookup | undefined) {
  const ds = group[0]!.dataset;
  return async (bad: BadAnswer): Promise<void> => {
    if (bad.reason !== 'block_hash' || bad.row === undefined || !blocks) return;
    const p = ds.position(bad.row);
    const chainId = ds.chainId(bad.row);
    if (typeof p.block_hash !== 'string') return;
    const current = await blocks.adoptIfCurrent(chainId, p.block_number, p.block_hash);
    if (current && edges.get(chainId)?.block_number === p.block_number) edges.set(chainId, current);
  };
}

/** Limits of windows exported again lie this far and more below the limit of a first export. */
const AGAIN_BELOW = 8;

/**
 * The limit a window's requests send: `limit`, or for a window exported again (its unit holds
 * rows of it already) one of AGAIN_BELOW values below `limit - AGAIN_BELOW`, chosen by its edges'
 * hashes, so that no cache keyed by URL answers it with what an earlier export of the window (of
 * another branch) was sent. Small limits (tests) are kept as they are.
 */
export function pagingLimit(limit: number, group: ExportWindow[], edges: WindowEdges): number {
  const hash = group.filter((u) => u.again).map((u) => edges.get(u.chainId)?.block_hash)[0];
  if (!hash || limit < 4 * AGAIN_BELOW) return limit;
  return limit - AGAIN_BELOW - (parseInt(hash.slice(-6), 16) % AGAIN_BELOW);
}
