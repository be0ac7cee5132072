import { InsightExportError, UserInputError, walk } from '../errors.js';
import type { InsightClient } from './client.js';
import { HttpStatusError } from './errors.js';
import type { BlockRecord } from './records.js';

export class ChainHeadError extends InsightExportError {
  override name = 'ChainHeadError';
}

/** The service has no block at all on a chain the job names: a chain it does not serve (or a wrong id). */
export class ChainNotServedError extends UserInputError {
  override name = 'ChainNotServedError';
}

/** Asks whether block `n` exists on the chain; null when the service has no such block. */
export type BlockProbe = (n: number) => Promise<BlockRecord | null>;

/**
 * Block `n` of the chain through `resolve/<n>`; null when the service has no such block. The
 * open-source indexer answers a block it has not indexed with the same empty HTTP 500 every time
 * (the client ends such a request with RepeatedServerError, or gives up on it after its attempts):
 * that, too, means no block.
 */
export async function resolveBlock(client: InsightClient, chainId: number, n: number): Promise<BlockRecord | null> {
  try {
    const res = await client.resolve(String(n), { chainIds: [chainId] });
    return res.data.blocks.find((b) => b.chain_id === chainId && b.block_number === n) ?? null;
  } catch (err) {
    const http = walk(err, (e) => e instanceof HttpStatusError);
    if (http?.status === 500 && !http.serverMessage) return null;
    throw err;
  }
}

/** The block whose hash is `hash` on the chain through `resolve/<hash>`; null when the service knows no such block. */
export async function resolveBlockByHash(client: InsightClient, chainId: number, hash: string): Promise<BlockRecord | null> {
  try {
    const res = await client.resolve(hash, { chainIds: [chainId] });
    return res.data.blocks.find((b) => b.chain_id === chainId && b.block_hash.toLowerCase() === hash.toLowerCase()) ?? null;
  } catch (err) {
    const http = walk(err, (e) => e instanceof HttpStatusError);
    if (http?.status === 500 && !http.serverMessage) return null;
    throw err;
  }
}

/** `resolve/<n>` as a block probe (a block number resolves to its block while it exists). */
export function resolveProbe(client: InsightClient, chainId: number): BlockProbe {
  return (n) => resolveBlock(client, chainId, n);
}

/** What a run needs of a block it found: its number and time. */
export type KnownBlock = Pick<BlockRecord, 'block_number' | 'block_timestamp'>;

/**
 * A block number that probably exists, or a function asked for one only when the hints before it
 * failed; the function may answer a block already seen (in a list answer), which needs no probe.
 */
export type BlockHint = number | (() => Promise<number | KnownBlock | undefined>);

export interface HeadSearch {
  head: KnownBlock;
  /** Requests the search sent (one per probe). */
  requests: number;
}

const GENESIS = [0, 1];
const MAX_DOUBLING = 2 ** 40;

/**
 * Any block the service has on the chain: the hints first (blocks that probably exist, best
 * first: the head a previous run found, the range's own block numbers, a target's newest row),
 * then genesis, then powers of two (indexes that start later than genesis). null when none exists.
 */
export async function findAnyBlock(
  probe: BlockProbe,
  hints: readonly BlockHint[],
): Promise<{ block: KnownBlock | null; requests: number; probed: boolean }> {
  let requests = 0;
  const tried = new Set<number>();
  const attempt = async (n: number | undefined) => {
    if (n === undefined || !Number.isSafeInteger(n) || n < 0 || tried.has(n)) return null;
    tried.add(n);
    requests++;
    return probe(n);
  };
  // A hint that cannot be had (its request failed) is no hint: genesis and the powers of two remain.
  // If they find nothing either, that failure, not "no block", is the answer.
  let hintFailure: Error | undefined;
  const hinted = (hint: BlockHint) =>
    typeof hint === 'number'
      ? hint
      : hint().catch((err: unknown) => {
          hintFailure ??= err instanceof Error ? err : new Error(String(err));
          return undefined;
        });
  for (const hint of [...hints, ...GENESIS]) {
    const h = await hinted(hint);
    if (typeof h === 'object') return { block: h, requests, probed: false };
    const b = await attempt(h);
    if (b) return { block: b, requests, probed: true };
  }
  for (let n = 2; n <= MAX_DOUBLING; n *= 2) {
    const b = await attempt(n);
    if (b) return { block: b, requests, probed: true };
  }
  if (hintFailure !== undefined) throw hintFailure;
  return { block: null, requests, probed: false };
}

/**
 * The newest block the service has on a chain, without depending on any target having rows: from
 * a block that exists (findAnyBlock), probe upward with doubling steps until a number is past the
 * head, then bisect. Cost: the probes of findAnyBlock (1 when the first hint exists) plus about
 * 2*log2(head - start) probes, so a run that starts from the head a previous run found pays
 * about 2*log2(blocks since then): ~20 requests for a day of a 2-second chain.
 * Throws ChainNotServedError when the service has no block at all on the chain.
 */
export async function findChainHead(
  probe: BlockProbe,
  chainId: number,
  hints: readonly BlockHint[] = [],
  /** A block number the service was seen not to have: the search never probes at or past it. */
  absent?: number,
): Promise<HeadSearch> {
  const start = await findAnyBlock(probe, hints);
  let requests = start.requests;
  if (!start.block) throw chainNotServed(chainId, requests);
  let low: KnownBlock = start.block;
  let lowN = low.block_number;
  // Doubling from the block found (a head is usually near it: each probe past it is a missing
  // block, which the indexer answers with retried 500s), never past a number known missing.
  const cap = absent !== undefined && absent > lowN ? absent : Infinity;
  let step = 1;
  let high = Math.min(lowN + step, cap);
  let highBlock: BlockRecord | null;
  while (high < cap && (requests++, (highBlock = await probe(high)))) {
    low = highBlock;
    lowN = high;
    step *= 2;
    high = Math.min(lowN + step, cap);
  }
  while (high - lowN > 1) {
    const mid = lowN + Math.floor((high - lowN) / 2);
    requests++;
    const b = await probe(mid);
    if (b) {
      low = b;
      lowN = mid;
    } else high = mid;
  }
  // A block taken from a list row was not asked for (it may carry anything): the head must be a
  // block a probe found. When no block above it was, it is asked itself; missing, the search starts
  // again from the hints that are block numbers.
  if (low === start.block && !start.probed) {
    requests++;
    const asked = await probe(lowN);
    if (!asked) {
      const again = await findChainHead(
        probe,
        chainId,
        hints.filter((h) => typeof h === 'number'),
        absent,
      );
      return { head: again.head, requests: requests + again.requests };
    }
    low = asked;
  }
  return { head: low, requests };
}

export function chainNotServed(chainId: number, requests: number): ChainNotServedError {
  return new ChainNotServedError(`The service has no block on chain ${chainId}`, {
    details: `resolve/<block number> with chain_id=${chainId} found no block (${requests} probes: the previous head, the job's block numbers, a target's recent transactions, genesis, powers of two)`,
    hint: 'Check the chain id (the service may not serve this chain) and the base URL; if the service indexes this chain from a later block, give range.from as a block number it has.',
  });
}
