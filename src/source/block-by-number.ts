import { InsightExportError } from '../errors.js';
import type { InsightClient } from './client.js';
import { resolveBlock, resolveBlockByHash } from './chain-head.js';
import type { BlockRecord } from './records.js';
import { BadAnswerError, ServiceDisagreementError } from './bad-answers.js';

interface Known {
  number: number;
  timestamp: number;
}

/** A block the service must serve (it served blocks below and above it) stayed missing on every attempt: exit 1. */
export class EdgeNotServedError extends BadAnswerError {
  override name = 'EdgeNotServedError';
  /** `edge`: `block N`, or `the last block before <time>` of a time window. */
  constructor(chainId: number, edge: string, span: { lowest: number; highest: number } | undefined, rows?: number) {
    super('edge_not_served', `that it has no ${edge} on chain ${chainId}`, {
      details:
        (span ? `the same run found blocks ${span.lowest} and ${span.highest} served` : 'no block of the chain served around it') +
        (rows ? `; the window has ${rows} rows` : ''),
      hint: 'A replica or shard of the service lags the others: the window is not exported without its edge block. Run again later.',
    });
  }
}

/** The last block before a time window's edge could not be found: the chain's blocks gave no edge. */
export class BlockSearchError extends InsightExportError {
  override name = 'BlockSearchError';
}

/**
 * Blocks by number through `resolve/<number>`, one request per block and chain, remembered for the
 * run (a block asked for twice, e.g. the same window edge of several targets, costs one request).
 * null: the service has no such block (yet).
 */
export class BlockLookup {
  private readonly cache = new Map<string, Promise<BlockRecord | null>>();
  /** Blocks seen per chain (number and timestamp), for lastBlockBefore. */
  private readonly known = new Map<number, Known[]>();
  /** Numbers the service had no block for, per chain. */
  private readonly absent = new Map<number, number[]>();
  /** Blocks the service answered, by chain and number (the latest answer): what rows at them must carry. */
  private readonly resolved = new Map<number, Map<number, BlockRecord>>();
  /** The lowest and highest block number the service served, per chain. */
  private readonly span = new Map<number, { lowest: number; highest: number }>();

  constructor(
    private readonly client: InsightClient,
    /** The chain head (a head search's), for lastBlockBefore when no block was seen yet. */
    private readonly anchor?: (chainId: number) => Promise<{ block?: number | undefined; time?: number | undefined }>,
  ) {}

  block(chainId: number, blockNumber: number): Promise<BlockRecord | null> {
    const key = `${chainId}:${blockNumber}`;
    let found = this.cache.get(key);
    if (!found) {
      found = resolveBlock(this.client, chainId, blockNumber).then((b) => {
        this.see(chainId, blockNumber, b);
        return b;
      });
      found.catch(() => this.cache.delete(key));
      this.cache.set(key, found);
    }
    return found;
  }

  /**
   * Block `n` asked again, whatever the service answered before (a missing block it serves, a
   * hash to confirm): one request more.
   */
  reask(chainId: number, blockNumber: number): Promise<BlockRecord | null> {
    this.cache.delete(`${chainId}:${blockNumber}`);
    const absent = this.absent.get(chainId);
    if (absent?.includes(blockNumber))
      this.absent.set(
        chainId,
        absent.filter((n) => n !== blockNumber),
      );
    return this.block(chainId, blockNumber);
  }

  /** The block the service answered at `n` this run (its last answer), if it was asked and served. */
  resolvedBlock(chainId: number, blockNumber: number): BlockRecord | undefined {
    // Asked for every row of a window: no key is built.
    return this.resolved.get(chainId)?.get(blockNumber);
  }

  /**
   * Block `n`, which the service must serve: it served blocks of the chain below and above it, and
   * blocks are served from the first to the head. Missing, it is asked again after a backoff (a
   * replica behind the one that served the block above, a shard missing for a moment); missing on
   * every attempt: EdgeNotServedError (exit 1). null only where the service may truly lack it: no
   * block below it was served (before its first block) or none above (past its head).
   */
  async servedBlock(chainId: number, blockNumber: number): Promise<BlockRecord | null> {
    let b = await this.block(chainId, blockNumber);
    for (let attempt = 1; !b && this.between(chainId, blockNumber); attempt++) {
      const what = `no block ${blockNumber} on chain ${chainId}, though it served blocks below and above it`;
      this.client.noteBadAnswer('edge_not_served');
      if (!(await this.client.retryBadAnswer(attempt, { reason: 'edge_not_served', what, chainIds: [chainId] })))
        throw new EdgeNotServedError(chainId, `block ${blockNumber}`, this.span.get(chainId));
      b = await this.reask(chainId, blockNumber);
    }
    return b;
  }

  /**
   * Block `n` as the service has it now, where it served the block before with `hash` (a recorded
   * window edge). Missing, it is asked again after a backoff (a replica behind the one that served
   * it); with another hash, asked once more, so that a reorganisation is found only when two
   * answers agree on it. ServiceDisagreementError (exit 1) when they never do; `what` names the
   * window for it.
   */
  async confirmedBlock(chainId: number, n: number, hash: string, what: string): Promise<BlockRecord> {
    let now = await this.block(chainId, n);
    for (let attempt = 1; !now; attempt++) {
      this.client.noteBadAnswer('edge_not_served');
      const bad = {
        reason: 'edge_not_served' as const,
        what: `no block ${n} on chain ${chainId}, which it served before`,
        chainIds: [chainId],
      };
      if (!(await this.client.retryBadAnswer(attempt, bad))) {
        throw new ServiceDisagreementError(`The service no longer serves block ${n} on chain ${chainId}, the edge of ${what}`, {
          details: `resolve/${n}?chain_id=${chainId} answered no block on ${attempt} attempts; a run recorded it with hash ${hash}`,
          hint: 'A replica or shard of the service lags the one that served it: nothing was exported again for it. Run again later.',
        });
      }
      now = await this.reask(chainId, n);
    }
    if (now.block_hash === hash) return now;
    const again = await this.reask(chainId, n);
    if (again?.block_hash === now.block_hash) return again;
    throw new ServiceDisagreementError(`The service answered two different blocks ${n} on chain ${chainId}, the edge of ${what}`, {
      details: `resolve/${n}?chain_id=${chainId}: ${now.block_hash}, then ${again?.block_hash ?? 'no block'}; a run recorded ${hash}`,
      hint: 'Replicas of the service disagree about a reorganisation (one has not caught up): nothing was exported again for it. Run again later.',
    });
  }

  /**
   * Block `b`, answered for its number, confirmed by its hash: `resolve/<hash>` must give the same
   * block. An answer of another branch kept for the number's URL (a cache from before a
   * reorganisation) is not the block the service knows by that hash: the number is asked again
   * after a backoff; BadAnswerError (exit 1) when no answer is confirmed. One request more per
   * block: for the edges of windows exported again.
   */
  async confirmedByHash(chainId: number, b: BlockRecord): Promise<BlockRecord> {
    for (let attempt = 1; ; attempt++) {
      const byHash = await resolveBlockByHash(this.client, chainId, b.block_hash);
      if (byHash?.block_number === b.block_number) return b;
      const what = `block ${b.block_number} on chain ${chainId} with hash ${b.block_hash}, a block it does not know by that hash`;
      this.client.noteBadAnswer('block_hash');
      if (!(await this.client.retryBadAnswer(attempt, { reason: 'block_hash', what, chainIds: [chainId] })))
        throw new BadAnswerError('block_hash', what, {
          details: `resolve/${b.block_number} and resolve/${b.block_hash} with chain_id=${chainId}`,
          hint: 'A cache or replica in front of the service answers a block of another branch: the window is not exported again from it. Run again later.',
        });
      const again = await this.reask(chainId, b.block_number);
      if (!again) throw new EdgeNotServedError(chainId, `block ${b.block_number}`, this.span.get(chainId));
      b = again;
    }
  }

  /**
   * A row at block `n` carries `hash`, not the hash the run kept for `n`. When the service knows
   * `hash` as block `n` (resolve/<hash>: no answer of another branch is kept under that URL), the
   * answer kept for the number was the stale one (a cache or a replica of another branch): the
   * block by its hash replaces it, and is returned. Otherwise the row is the stale one: null.
   */
  async adoptIfCurrent(chainId: number, n: number, hash: string): Promise<BlockRecord | null> {
    const byHash = await resolveBlockByHash(this.client, chainId, hash);
    if (byHash?.block_number !== n) return null;
    this.cache.set(`${chainId}:${n}`, Promise.resolve(byHash));
    this.see(chainId, n, byHash);
    return byHash;
  }

  /** Whether the service knows `edge` by its hash (resolve/<hash>): a block of its chain now, not an old answer kept for the number. */
  async isCurrent(chainId: number, edge: { block_number: number; block_hash: string }): Promise<boolean> {
    return (await resolveBlockByHash(this.client, chainId, edge.block_hash))?.block_number === edge.block_number;
  }

  /** The lowest and highest block the service served on the chain this run. */
  servedSpan(chainId: number): { lowest: number; highest: number } | undefined {
    const span = this.span.get(chainId);
    return span && { ...span };
  }

  /** Whether the service served blocks of the chain below and above `n`. */
  private between(chainId: number, n: number): boolean {
    const span = this.span.get(chainId);
    return span !== undefined && span.lowest < n && n < span.highest;
  }

  /**
   * The chain head a head search found: the block, and that the block after it did not exist then
   * (the search asked). Edges of windows reaching past the head end at the head without asking
   * again for blocks the service does not have (the indexer answers each with a 500, retried).
   */
  headFound(chainId: number, block: number, time: number): void {
    this.hint(chainId, block, time);
    this.see(chainId, block + 1, null);
  }

  /** A block's number and timestamp learnt elsewhere (a block the service served). */
  hint(chainId: number, block: number, time: number): void {
    const span = this.span.get(chainId);
    if (!span) this.span.set(chainId, { lowest: block, highest: block });
    else {
      span.lowest = Math.min(span.lowest, block);
      span.highest = Math.max(span.highest, block);
    }
    let list = this.known.get(chainId);
    if (!list) this.known.set(chainId, (list = []));
    // Once per block: the search counts distinct blocks (one alone gives no block time).
    if (!list.some((k) => k.number === block)) list.push({ number: block, timestamp: time });
  }

  /**
   * The last block whose timestamp is before `time` (the upper edge of a time window), or null
   * when the chain has none. Interpolates between blocks already seen (the previous window's
   * edge, the head), so on a chain of steady block times it costs two requests sent together (the
   * estimate and its successor); falls back to bisecting when block times are uneven.
   */
  async lastBlockBefore(chainId: number, time: number): Promise<BlockRecord | null> {
    // The head bounds the search from above only when no block seen does: a window in the past
    // of a block already seen needs no head search.
    if (this.anchor && !this.boundedAbove(chainId, time)) {
      const head = await this.anchor(chainId);
      if (head.block !== undefined && head.time !== undefined) this.headFound(chainId, head.block, head.time);
    }
    let gallop = 0;
    let predecessorAsked = false;
    for (let rounds = 0; rounds < 200; rounds++) {
      const seen = this.known.get(chainId) ?? [];
      if (seen.length === 0) {
        throw new BlockSearchError(`No block of chain ${chainId} known to search from`, {
          details: `the last block before ${time} (unix seconds)`,
          hint: 'The service gave no block of this chain, not even its head: check that it serves the chain, then run again.',
        });
      }
      // Bounds: blocks seen before / at or after `time`; a number the service has no block for
      // bounds the search too (below the first block seen: before the chain's start; above: past its head).
      let lo: { n: number; ts: number } | null = null;
      let hi: { n: number; ts: number } | null = null;
      let lowest = Infinity;
      let highest = -Infinity;
      for (const k of seen) {
        if (k.timestamp < time && (!lo || k.number > lo.n)) lo = { n: k.number, ts: k.timestamp };
        if (k.timestamp >= time && (!hi || k.number < hi.n)) hi = { n: k.number, ts: k.timestamp };
        lowest = Math.min(lowest, k.number);
        highest = Math.max(highest, k.number);
      }
      for (const n of this.absent.get(chainId) ?? []) {
        if (n < lowest && (!lo || n > lo.n)) lo = { n, ts: -Infinity };
        if (n > highest && (!hi || n < hi.n)) hi = { n, ts: Infinity };
      }
      if (!lo && hi && hi.n === 0) return null;
      if (lo && hi && hi.n === lo.n + 1) return Number.isFinite(lo.ts) ? this.block(chainId, lo.n) : null;
      if (seen.length === 1 && seen[0]!.number > 0 && !predecessorAsked) {
        // One block gives no block time, and a guess far off probes numbers the chain lacks
        // (before its first block): its predecessor gives one (asked once for concurrent searches).
        predecessorAsked = true;
        await this.block(chainId, seen[0]!.number - 1);
        continue;
      }
      const spacing = this.blockTime(seen);
      const bisect = rounds % 3 === 2;
      // `estimate`: the block guessed to be the last before `time`; every third round bisects, so
      // uneven block times still converge.
      let estimate: number;
      if (lo && hi && Number.isFinite(lo.ts) && Number.isFinite(hi.ts) && !bisect) {
        estimate = lo.n + Math.ceil(((time - lo.ts) * (hi.n - lo.n)) / (hi.ts - lo.ts)) - 1;
      } else if (lo && hi && Number.isFinite(lo.ts) && !bisect) {
        estimate = lo.n + Math.ceil((time - lo.ts) / spacing) - 1;
      } else if (lo && hi && Number.isFinite(hi.ts) && !bisect) {
        estimate = hi.n - Math.floor((hi.ts - time) / spacing) - 1;
      } else if (lo && hi) {
        estimate = lo.n + Math.floor((hi.n - lo.n) / 2);
      } else if (lo) {
        estimate = lo.n + Math.max(1, Math.ceil((time - lo.ts) / spacing) - 1) * 2 ** gallop++;
      } else {
        estimate = Math.max(0, hi!.n - (Math.floor((hi!.ts - time) / spacing) + 1) * 2 ** gallop++);
      }
      // An estimate outside the bounds (block times uneven, or a bound is a block the service
      // lacks) bisects: clamping it would walk one block per probe.
      if (lo && hi && (estimate < lo.n || estimate >= hi.n)) estimate = lo.n + Math.floor((hi.n - lo.n) / 2);
      // The edge is proven by a pair of neighbours: the estimate and the block after it are asked
      // together, so a right estimate (steady block times) ends the search in one round trip.
      const probes = (bisect ? [estimate] : [estimate, estimate + 1]).filter((n) => (!lo || n > lo.n) && (!hi || n < hi.n));
      if (probes.length === 0) probes.push(lo ? lo.n + 1 : hi!.n - 1);
      // A probe the service denies between blocks it served (a replica behind) is asked again: see servedBlock.
      await Promise.all(probes.map((n) => this.servedBlock(chainId, n)));
    }
    throw new BlockSearchError(`No block edge found before ${time} on chain ${chainId}`, {
      details: 'the search asked 200 rounds of blocks without finding two neighbours on either side of the time',
      hint: "The service's block times do not rise with the block numbers here: run again, and report it to the service if it persists.",
    });
  }

  /** A block seen at or after `time`, or a number the service lacks above every block seen. */
  private boundedAbove(chainId: number, time: number): boolean {
    const seen = this.known.get(chainId) ?? [];
    if (seen.some((k) => k.timestamp >= time)) return true;
    const highest = Math.max(...seen.map((k) => k.number));
    return seen.length > 0 && (this.absent.get(chainId) ?? []).some((n) => n > highest);
  }

  private see(chainId: number, n: number, b: BlockRecord | null): void {
    if (b) {
      this.hint(chainId, b.block_number, b.block_timestamp);
      let ofChain = this.resolved.get(chainId);
      if (!ofChain) this.resolved.set(chainId, (ofChain = new Map<number, BlockRecord>()));
      ofChain.set(b.block_number, b);
    } else {
      let list = this.absent.get(chainId);
      if (!list) this.absent.set(chainId, (list = []));
      list.push(n);
    }
  }

  /** Seconds per block from the two blocks seen furthest apart (1 s when one was seen). */
  private blockTime(seen: Known[]): number {
    const ratio = secondsPerBlock(
      seen,
      (k) => k.number,
      (k) => k.timestamp,
    );
    return ratio === undefined ? 1 : Math.max(1e-3, ratio);
  }
}

/**
 * Seconds per block between the two blocks furthest apart by number (their timestamps as the
 * service gave them, so it may be 0 or negative); undefined when fewer than two numbers are known.
 */
export function secondsPerBlock<B extends object>(
  blocks: readonly B[],
  numberOf: (b: B) => number,
  timeOf: (b: B) => number,
): number | undefined {
  if (blocks.length < 2) return undefined;
  let low = blocks[0]!;
  let high = blocks[0]!;
  for (const b of blocks) {
    if (numberOf(b) < numberOf(low)) low = b;
    if (numberOf(b) > numberOf(high)) high = b;
  }
  if (numberOf(high) === numberOf(low)) return undefined;
  return (timeOf(high) - timeOf(low)) / (numberOf(high) - numberOf(low));
}
