import { UserInputError } from '../errors.js';
import type { Axis, ContractTarget, Job, WalletTarget } from '../job/schema.js';
import type { Logger } from '../log.js';
import type { ChainHead } from '../plan/index.js';
import {
  chainNotServed,
  ChainNotServedError,
  findAnyBlock,
  findChainHead,
  resolveProbe,
  type BlockHint,
  type KnownBlock,
} from '../source/chain-head.js';
import type { InsightClient } from '../source/client.js';
import type { ListQuery } from '../source/query.js';
import type { ResolveResponse } from '../source/records.js';
import { secondsPerBlock } from '../source/block-by-number.js';
import type { KnownHeads } from '../state/chain-heads.js';
import { ServiceDisagreementError } from '../source/bad-answers.js';

/** The newest block the service served on a chain in a run (see ChainChecks.serviceHeads). */
export interface ServiceHead {
  chain_id: number;
  block: number;
  /** Unix seconds of the block. */
  time: number;
  /** The service's head (a head search found it); false: a block it serves, at or past what the run needed. */
  exact: boolean;
  /** Seconds from the block's time to the run's clock: how far the service is behind, shown, never used to decide. */
  behind_clock_s: number;
}

/** The chain is served, but the job's range lies before every block the service was found to have: exit 2. */
export class RangeBeforeServedBlocksError extends UserInputError {
  override name = 'RangeBeforeServedBlocksError';
}

/** A contract target the service has never seen on a chain. */
export class ContractNotFoundError extends UserInputError {
  override name = 'ContractNotFoundError';
}

/**
 * What a run learns about the job's chains from the service: their heads (`to: latest`) and that
 * each chain it exports is served at all (a chain the service does not serve answers every list
 * request with an empty page, which would otherwise end as a "successful" empty window).
 * Heads found are kept at the destination (src/state/chain-heads.ts) so the next run searches
 * upward from them in a few requests.
 */
export class ChainChecks {
  /** Requests spent on chain heads and checks. */
  requests = 0;
  /** Heads and blocks found in this run, by chain id (to be kept for the next run). */
  readonly found: KnownHeads = {};
  /** Other blocks seen on the way (a wallet's oldest row in the range), by chain id: they bound window edges. */
  readonly seen = new Map<number, KnownBlock[]>();
  private readonly heads = new Map<number, Promise<ChainHead>>();
  /** The lowest block number a probe found missing, by chain: the head lies below it. */
  private readonly absent = new Map<number, number>();
  private readonly served = new Map<number, Promise<KnownBlock>>();
  private readonly resolved = new Map<string, Promise<ResolveResponse>>();
  private readonly newest = new Map<string, Promise<number | KnownBlock | undefined>>();

  constructor(
    private readonly job: Job,
    private readonly client: InsightClient,
    private readonly known: KnownHeads,
    private readonly logger?: Logger,
  ) {}

  /** The chain head, searched once per run (throws ChainNotServedError for a chain without blocks). */
  head(chainId: number): Promise<ChainHead> {
    let p = this.heads.get(chainId);
    if (!p) {
      p = (async () => {
        const probe = this.probe(chainId);
        const search = await findChainHead(probe, chainId, this.hints(chainId), this.absent.get(chainId)).catch(async (err: unknown) => {
          throw err instanceof ChainNotServedError ? await this.noBlockFound(chainId, err) : err;
        });
        this.requests += search.requests;
        const h = search.head;
        this.remember(chainId, h.block_number, h.block_timestamp);
        this.logger?.info({ chain: chainId, head: h.block_number, requests: search.requests }, 'chain head found');
        return { block: h.block_number, time: h.block_timestamp };
      })();
      this.heads.set(chainId, p);
    }
    return p;
  }

  /**
   * The newest block the service was seen to serve on each chain this run: its head where a head
   * search found it (`exact`), else the block that proved the range served (a lower bound).
   */
  async serviceHeads(now = Date.now() / 1000): Promise<ServiceHead[]> {
    const searched = new Set<number>();
    for (const [chainId, p] of this.heads)
      if (
        await p.then(
          () => true,
          () => false,
        )
      )
        searched.add(chainId);
    return Object.entries(this.found)
      .map(([chain, h]) => ({
        chain_id: Number(chain),
        block: h.block,
        time: h.time,
        exact: searched.has(Number(chain)),
        behind_clock_s: Math.max(0, Math.round(now - h.time)),
      }))
      .sort((a, b) => a.chain_id - b.chain_id);
  }

  /** Checks that the service has blocks on each chain (one request per chain when a hint holds). */
  async checkServed(chainIds: Iterable<number>): Promise<void> {
    const checks = [...new Set(chainIds)].map((chainId) => this.servedBlock(chainId));
    // Every chain's check runs at once; the first chain (in job order) that fails is the error.
    const results = await Promise.allSettled(checks);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /**
   * Whether the service serves `point` (a block number, or a block time) on the chain, proven by a
   * block at or past it: a block this run already knows (the head an earlier run found, checked by
   * the served check), else one probe aimed at it from the blocks known (at most three when block
   * times are uneven). false: not proven, and the caller searches the head. Never the clock.
   */
  async serves(chainId: number, axis: Axis, point: number): Promise<boolean> {
    const reaches = (b: KnownBlock) => (axis === 'block' ? b.block_number : b.block_timestamp) >= point;
    // An unknown contract is the precise cause when the chain then looks unserved (its hints fail).
    await this.checkContracts(
      this.job.targets.flatMap((t) => (t.kind === 'contract' && t.chains.includes(chainId) ? [{ contract: t.contract, chainId }] : [])),
    );
    await this.servedBlock(chainId);
    for (let probes = 0; probes < 3; probes++) {
      const known = this.knownBlocks(chainId);
      if (known.some(reaches)) return true;
      // One block gives no block time (unless an earlier run kept the chain's): its predecessor does (one probe more).
      const single = known.length === 1 && known[0]!.block_number > 0 ? known[0]!.block_number - 1 : undefined;
      const target = axis === 'block' ? point : (blockNear(known, point, this.known[chainId]?.seconds_per_block) ?? single);
      if (target === undefined) return false;
      this.requests++;
      const b = await this.probe(chainId)(target);
      if (!b) {
        this.absent.set(chainId, Math.min(target, this.absent.get(chainId) ?? Infinity));
        return false;
      }
      this.remember(chainId, b.block_number, b.block_timestamp);
      this.see(chainId, b);
      if (axis === 'block') return reaches(b);
    }
    return this.knownBlocks(chainId).some(reaches);
  }

  /** The block the served check found (cached: one check per chain and run; a head found serves too). */
  private servedBlock(chainId: number): Promise<KnownBlock> {
    let p = this.served.get(chainId);
    if (!p) {
      const head = this.heads.get(chainId);
      p = head
        ? head.then((h) => ({ block_number: h.block!, block_timestamp: h.time! }))
        : (async () => {
            const probe = this.probe(chainId);
            const r = await findAnyBlock(probe, this.hints(chainId));
            this.requests += r.requests;
            if (!r.block) throw await this.noBlockFound(chainId, chainNotServed(chainId, r.requests));
            this.remember(chainId, r.block.block_number, r.block.block_timestamp);
            this.see(chainId, r.block);
            return r.block;
          })();
      this.served.set(chainId, p);
    }
    return p;
  }

  /** Blocks with a time this run has seen on the chain (served check, probes, a wallet's rows). */
  private knownBlocks(chainId: number): KnownBlock[] {
    const found = this.found[chainId];
    return [...(found ? [{ block_number: found.block, block_timestamp: found.time }] : []), ...(this.seen.get(chainId) ?? [])];
  }

  private see(chainId: number, b: KnownBlock): void {
    const seen = this.seen.get(chainId) ?? [];
    if (!seen.some((x) => x.block_number === b.block_number))
      this.seen.set(chainId, [...seen, { block_number: b.block_number, block_timestamp: b.block_timestamp }]);
  }

  /**
   * Checks that the service knows each contract on the chains it is exported from: resolve of an
   * address it has never seen answers type `address` with no transactions (a typo, or the
   * contract lives on another chain), and every list request would answer empty pages.
   */
  async checkContracts(pairs: Iterable<{ contract: string; chainId: number }>): Promise<void> {
    const seen = new Set<string>();
    for (const { contract, chainId } of pairs) {
      const key = `${contract}/${chainId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const r = await this.resolveAddress(contract, chainId);
      if (r.data.type !== 'contract' && r.data.transactions.length === 0 && r.data.events.length === 0) {
        throw new ContractNotFoundError(`The service knows no contract ${contract} on chain ${chainId}`, {
          details: `resolve/${contract}?chain_id=${chainId} answered type "${r.data.type}" with no transactions`,
          hint: "Check the address, and that the contract is deployed on that chain (targets[].chains limits a target to some of the job's chains).",
        });
      }
    }
  }

  private probe(chainId: number) {
    return resolveProbe(this.client, chainId);
  }

  private remember(chainId: number, block: number, time: number): void {
    const prev = this.found[chainId] ?? this.known[chainId];
    if (!prev || prev.block <= block) this.found[chainId] = { block, time };
  }

  /**
   * The heads to keep for the next run: the newest block found per chain, with the chain's mean
   * block time from the two blocks furthest apart that this run knows (else the one kept before).
   */
  headsToKeep(): KnownHeads {
    const out: KnownHeads = {};
    for (const [chain, h] of Object.entries(this.found)) {
      const spacing = meanBlockTime(this.knownBlocks(Number(chain))) ?? this.known[chain]?.seconds_per_block;
      out[chain] = { ...h, ...(spacing === undefined ? {} : { seconds_per_block: spacing }) };
    }
    return out;
  }

  /**
   * Why no block was found on a chain: the service serves none (`notServed`), or it has rows of a
   * target on it outside the job's range (the oldest, asked without the range), so the chain is
   * served but none of its blocks the probes tried lies in or before the range.
   */
  private async noBlockFound(chainId: number, notServed: ChainNotServedError): Promise<Error> {
    const before = this.known[chainId];
    if (before) {
      // The service served a block of the chain to an earlier run: no block now is an answer of a
      // replica behind it (or a shard missing for a moment), not a wrong chain.
      return new ServiceDisagreementError(
        `The service found no block on chain ${chainId}, though it served block ${before.block} to an earlier run`,
        {
          details: notServed.details,
          hint: 'A replica or shard of the service lags the one that answered before: run again later.',
        },
      );
    }
    const found = await this.oldestTargetRow(chainId).catch(() => undefined);
    if (!found) return notServed;
    const { of, oldest } = found;
    const range = this.job.range;
    const at = range?.by === 'block' ? oldest.block_number : oldest.block_timestamp;
    if (!range || range.to === 'latest' || at < range.to) {
      // A row in or before the range is in a block the service has: its own answers disagree.
      return new ServiceDisagreementError(
        `The service sent rows on chain ${chainId} in block ${oldest.block_number}, but answered no block to the head search`,
        {
          details: `the oldest row of ${of} on chain ${chainId} is in block ${oldest.block_number}; ${notServed.details ?? ''}`,
          hint: 'Replicas or shards of the service answer differently (one lags): run again later.',
        },
      );
    }
    const edge = (v: number | 'latest' | undefined) =>
      v === undefined || v === 'latest' ? String(v ?? '-') : range?.by === 'block' ? `block ${v}` : new Date(v * 1000).toISOString();
    const when = new Date(oldest.block_timestamp * 1000).toISOString();
    return new RangeBeforeServedBlocksError(`The service has blocks on chain ${chainId}, but none in or before this job's range`, {
      details: `range [${edge(range?.from)}, ${edge(range?.to)}); the oldest row of ${of} on chain ${chainId} is in block ${oldest.block_number} (${when}), and no block below it was found (${notServed.details ?? ''})`,
      hint: `The chain id is right: the service's blocks on chain ${chainId} begin after this range. Move range.from / range.to to where it has blocks (block ${oldest.block_number}, ${when.slice(0, 10)}, has rows of ${of}).`,
    });
  }

  /** The targets with rows of their own in a list route (a chain target has none). */
  private listTargets(): (WalletTarget | ContractTarget)[] {
    return this.job.targets.filter((t) => t.kind !== 'chain');
  }

  /** The oldest row of the chain's first target, asked without the job's range (a wallet's transaction, a contract's event). */
  private async oldestTargetRow(chainId: number): Promise<{ of: string; oldest: KnownBlock } | undefined> {
    const target = this.listTargets().find((t) => t.chains.includes(chainId));
    if (!target) return undefined;
    const q: ListQuery = { chainIds: [chainId], sortBy: 'block_number', sortOrder: 'asc', limit: 1 };
    this.requests++;
    const rows: (KnownBlock & { chain_id: number })[] =
      target.kind === 'wallet'
        ? (await this.client.walletTransactions(target.wallet, q)).data
        : (await this.client.contractEvents(target.contract, target.events[0]!.signature, q)).data;
    const row = rows.find((r) => r.chain_id === chainId);
    if (!row) return undefined;
    const of = target.kind === 'wallet' ? target.wallet : `${target.contract} (${target.events[0]!.signature})`;
    return { of, oldest: { block_number: row.block_number, block_timestamp: row.block_timestamp } };
  }

  /**
   * Block numbers that probably exist on the chain, best first: the head a previous run found,
   * the job's own block range, then a recent transaction of a target (a wallet's newest row in the
   * range, else resolve of a target's address; asked only when the others fail; a target without
   * transactions passes to genesis and the powers of two).
   */
  private hints(chainId: number): BlockHint[] {
    const out: BlockHint[] = [];
    const known = this.known[chainId];
    if (known) out.push(known.block);
    const range = this.job.range;
    if (range?.by === 'block') {
      out.push(range.from);
      if (range.to !== 'latest') out.push(range.to - 1);
    }
    out.push(() => this.targetBlock(chainId));
    return out;
  }

  /**
   * A block of a target's newest transaction on the chain: the wallet route's newest row within
   * the job's range (a row in the range asked for is a block the chain has, number and time: no
   * probe needed), else a block resolve lists for a target (some services list none for a plain
   * address).
   */
  private async targetBlock(chainId: number): Promise<number | KnownBlock | undefined> {
    const targets = this.listTargets()
      .filter((x) => x.chains.includes(chainId))
      .slice(0, 3);
    const wallet = targets.find((t) => t.kind === 'wallet');
    if (wallet) {
      const row = await this.newestWalletRow(wallet.wallet, chainId);
      if (row) return row;
    }
    for (const t of targets) {
      const r = await this.resolveAddress(t.kind === 'wallet' ? t.wallet : t.contract, chainId);
      const n = [...r.data.transactions, ...r.data.events].map((x) => x.block_number).find((x) => Number.isSafeInteger(x));
      if (n !== undefined) return n;
    }
    return undefined;
  }

  /**
   * The wallet's newest transaction on the chain within the job's range: its block, or its block
   * number when the row is outside what was asked. Its oldest is asked in the same round trip and
   * kept in `seen`.
   */
  private newestWalletRow(wallet: string, chainId: number): Promise<number | KnownBlock | undefined> {
    const key = `${wallet.toLowerCase()}/${chainId}`;
    let p = this.newest.get(key);
    if (!p) this.newest.set(key, (p = this.askNewestWalletRow(wallet, chainId)));
    return p;
  }

  private async askNewestWalletRow(wallet: string, chainId: number): Promise<number | KnownBlock | undefined> {
    // Within the job's range: a block there is the best start, and the run asks for nothing outside it.
    const range = this.job.range;
    const column = range?.by === 'block' ? 'block_number' : 'block_timestamp';
    const filters: Record<string, string> = {};
    if (range) filters[`filter_${column}_gte`] = String(range.from);
    if (range && range.to !== 'latest') filters[`filter_${column}_lt`] = String(range.to);
    const ask = async (sortOrder: 'asc' | 'desc') => {
      this.requests++;
      const page = await this.client.walletTransactions(wallet, {
        chainIds: [chainId],
        filters,
        sortBy: 'block_number',
        sortOrder,
        limit: 1,
      });
      const row = page.data[0];
      if (!row || row.chain_id !== chainId) return undefined;
      const at = column === 'block_number' ? row.block_number : row.block_timestamp;
      const asked = !range || (at >= range.from && (range.to === 'latest' || at < range.to));
      // A row the service should not have sent may carry anything: only its block number is a hint.
      return asked ? { block_number: row.block_number, block_timestamp: row.block_timestamp } : row.block_number;
    };
    // The oldest row too, in the same round trip: two blocks give the window edges a block time
    // (one alone costs a request for the block before it, one round trip more before any page).
    const [newest, oldest] = await Promise.all([ask('desc'), ask('asc').catch(() => undefined)]);
    if (typeof oldest === 'object') this.see(chainId, oldest);
    if (typeof newest === 'object') this.see(chainId, newest);
    return newest;
  }

  private resolveAddress(address: string, chainId: number): Promise<ResolveResponse> {
    const key = `${address.toLowerCase()}/${chainId}`;
    let p = this.resolved.get(key);
    if (!p) {
      this.requests++;
      this.resolved.set(key, (p = this.client.resolve(address, { chainIds: [chainId] })));
    }
    return p;
  }
}

/** Chain heads for the planner (`to: latest`), through a run's ChainChecks. */
export function headFinder(checks: ChainChecks): (chainId: number) => Promise<ChainHead> {
  return (chainId) => checks.head(chainId);
}

/** Seconds per block between the two blocks furthest apart; undefined unless two blocks show time passing. */
function meanBlockTime(known: readonly KnownBlock[]): number | undefined {
  const ratio = secondsPerBlock(
    known,
    (b) => b.block_number,
    (b) => b.block_timestamp,
  );
  return ratio !== undefined && ratio > 0 ? ratio : undefined;
}

/**
 * A block number expected a little past `time`, from the blocks known (their mean block time, or
 * `spacing` when one block is known): aimed past it by a margin so that uneven block times still
 * land at or after it.
 */
export function blockNear(known: readonly KnownBlock[], time: number, spacing?: number): number | undefined {
  if (known.length === 0) return undefined;
  const high = known.reduce((a, b) => (b.block_number > a.block_number ? b : a));
  const perBlock = meanBlockTime(known) ?? spacing;
  if (perBlock === undefined) return undefined;
  const ahead = Math.max(0, (time - high.block_timestamp) / perBlock);
  return high.block_number + Math.ceil(ahead * 1.01) + 1;
}
