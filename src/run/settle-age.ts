/**
 * Whether a window's block time is older than the settle horizon (src/run/settle.ts): older than
 * `now` minus the horizon, where `now` is the run's start, or the service's head on the chain
 * when a `to: latest` job found it behind the clock (what the service has not indexed is not old
 * to it). A time window's newest block time is its end (exclusive); a block window's is the time
 * of its last block (`end - 1`), asked of the service (`resolve`, cached for the run: the
 * reorganisation check has usually asked the same edges), bisected over a chain's windows, so a
 * chain costs about log2(windows) requests at most.
 */
import type { Axis } from '../job/schema.js';
import type { ChainHead, Interval } from '../plan/index.js';
import type { BlockLookup } from '../source/block-by-number.js';

export interface SettleAgeInput {
  /** The settle horizon, seconds. */
  horizonS: number;
  /** The run's start, unix seconds. */
  now: number;
  /** `to: latest`: the service's head on a chain (the run's head search, shared). */
  head?: ((chainId: number) => Promise<ChainHead>) | undefined;
  blocks: BlockLookup;
}

export class SettleAge {
  private readonly cutoffs = new Map<number, Promise<number>>();

  constructor(private readonly input: SettleAgeInput) {}

  /** Unix seconds: a window whose newest block time is before this is older than the horizon. */
  cutoff(chainId: number): Promise<number> {
    let p = this.cutoffs.get(chainId);
    if (!p) {
      const { now, horizonS, head } = this.input;
      p = (async () => {
        // A head search that fails here fails the run's plan too; the clock is enough to decide on.
        const time = head ? ((await head(chainId).catch(() => undefined))?.time ?? now) : now;
        return Math.min(now, time) - horizonS;
      })();
      this.cutoffs.set(chainId, p);
    }
    return p;
  }

  /** The windows of `windows` (of one chain, on `axis`) older than the horizon. */
  async older<W extends Interval>(chainId: number, axis: Axis, windows: readonly W[]): Promise<W[]> {
    if (windows.length === 0) return [];
    const cutoff = await this.cutoff(chainId);
    if (axis === 'time') return windows.filter((w) => w.end - 1 < cutoff);
    const edges = [...new Set(windows.map((w) => w.end - 1))].sort((a, b) => a - b);
    // Block times grow with block numbers: the edges older than the cutoff are a prefix.
    const isOlder = async (n: number) => {
      const b = await this.input.blocks.block(chainId, n);
      return b !== null && b.block_timestamp < cutoff;
    };
    let lo = 0;
    let hi = edges.length - 1;
    // The newest first: when it is older, every one is (one request).
    if (await isOlder(edges.at(-1)!)) lo = hi = edges.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (await isOlder(edges[mid]!)) lo = mid + 1;
      else hi = mid;
    }
    const newestOlder = lo > 0 ? edges[lo - 1]! : -Infinity;
    return windows.filter((w) => w.end - 1 <= newestOlder);
  }
}
