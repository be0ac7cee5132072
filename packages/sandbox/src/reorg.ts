/**
 * Reorganisations of the seeded sandbox: the last `depth` blocks of a chain are replaced by a
 * different branch of the same height. Every block of the branch gets a new hash (so does every
 * block above it: a block's hash commits to its parent), and within it, by a deterministic draw
 * per reorganisation:
 * - about 1 transaction in 10 is dropped (gone from every list, resolve and block);
 * - about 1 in 10 is replaced by a new one (a new transaction hash in its place);
 * - in about 1 block in 5, the last transaction moves to the next block (first in it; the
 *   transaction indexes and log indexes of that block shift by one).
 * The chain's height and timestamps stay; block records keep their counts and bloom as before.
 *
 * From tests: `reorganise(sandbox.data, chainId, depth)`. Over HTTP: `POST /_sandbox/reorg?chain_id=1&depth=64`
 * answers `{ chain_id, depth, from_block, head_block, dropped, replaced, moved }`.
 */
import type { ChainState } from './dataset.js';
import type { SandboxData, SandboxDataset } from './data.js';
import { SandboxHttpError, badRequest } from './errors.js';
import { hash3 } from './prng.js';

export interface ReorgSummary {
  chain_id: number;
  depth: number;
  /** The first block replaced. */
  from_block: number;
  head_block: number;
  dropped: number;
  replaced: number;
  moved: number;
}

export const REORG_ROUTE = '/_sandbox/reorg';

export function reorganise(data: SandboxData, chainId: number, depth: number): ReorgSummary {
  const c = (data as SandboxDataset).chainState?.(chainId);
  if (!c) throw badRequest(`no chain ${chainId} in this sandbox`);
  if (!Number.isSafeInteger(depth) || depth < 1 || depth > c.headOff + 1) {
    throw badRequest(`depth must be a number of blocks from 1 to ${c.headOff + 1}, not ${depth}`);
  }
  const fromOff = c.headOff + 1 - depth;
  const key = hash3(c.blockKey, c.branches.length + 1, 0x0e0e);
  c.branches.push({ fromOff, key });
  const firstRow = c.firstRowOfBlock(fromOff);
  const hidden = (c.hidden ??= new Uint8Array(c.n));
  let dropped = 0;
  let replaced = 0;
  let moved = 0;
  for (let row = firstRow; row < c.n; row++) {
    if (hidden[row]) continue;
    const draw = hash3(key, row, 0xd0) % 10;
    if (draw === 0) {
      hidden[row] = 1;
      dropped++;
    } else if (draw === 1) {
      c.rekeyed.set(row, hash3(key, 0x7a, 0x11));
      replaced++;
    }
  }
  for (let row = firstRow; row < c.n - 1; row++) {
    const off = c.blockOff[row]!;
    if (c.blockOff[row + 1] === off || off >= c.headOff || hash3(key, off, 0xb0) % 5 !== 0) continue;
    moveToNextBlock(c, row);
    moved++;
  }
  rebuildIndexes(c);
  return {
    chain_id: chainId,
    depth,
    from_block: c.spec.firstBlock + fromOff,
    head_block: c.spec.firstBlock + c.headOff,
    dropped,
    replaced,
    moved,
  };
}

/** The last row of its block becomes the first of the next block. */
function moveToNextBlock(c: ChainState, row: number): void {
  const next = c.blockOff[row]! + 1;
  c.blockOff[row] = next;
  c.txIndex[row] = 0;
  let logs = 0;
  for (let r = row; r < c.n && c.blockOff[r] === next; r++) {
    if (r > row) c.txIndex[r] = c.txIndex[r]! + 1;
    if (c.hasLog(r)) c.logIndex[r] = logs++;
  }
}

/** The row indexes of the list routes without the dropped rows. */
function rebuildIndexes(c: ChainState): void {
  const hidden = c.hidden!;
  const without = (offsets: Uint32Array, rows: Uint32Array): [Uint32Array, Uint32Array] => {
    const outOffsets = new Uint32Array(offsets.length);
    const kept: number[] = [];
    for (let k = 0; k + 1 < offsets.length; k++) {
      outOffsets[k] = kept.length;
      for (let i = offsets[k]!; i < offsets[k + 1]!; i++) if (!hidden[rows[i]!]) kept.push(rows[i]!);
    }
    outOffsets[offsets.length - 1] = kept.length;
    return [outOffsets, Uint32Array.from(kept)];
  };
  [c.actorOffsets, c.actorRows] = without(c.actorOffsets, c.actorRows);
  [c.eventOffsets, c.eventRows] = without(c.eventOffsets, c.eventRows);
}

/** The control route: `POST /_sandbox/reorg?chain_id=<id>&depth=<blocks>`. */
export function reorgRoute(data: unknown, url: URL): ReorgSummary {
  if (typeof (data as SandboxDataset).chainState !== 'function')
    throw new SandboxHttpError(404, 'this sandbox cannot reorganise (only the seeded data set can)');
  const chainId = Number(url.searchParams.get('chain_id'));
  const depth = Number(url.searchParams.get('depth'));
  return reorganise(data as SandboxData, chainId, depth);
}
