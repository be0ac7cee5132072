import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem';
import type { Logger } from '../../../../src/shared-with-sandbox.js';
import { ReorgDuringLoad } from './convert.js';
import type { RpcNode } from './node.js';
import type { ChainStore, TokenInfo } from './store.js';

export interface FollowOptions {
  /** First block to load: a number, or negative = that many blocks below the node's head at start. Default 0. */
  fromBlock?: number | undefined;
  /** Blocks fetched concurrently. Default 16. */
  batchBlocks?: number | undefined;
  logger?: Logger | undefined;
}

export interface SyncResult {
  /** Blocks appended. */
  added: number;
  /** Blocks removed because the node reorganised them. */
  removed: number;
  head: number | null;
}

const METADATA_ABI = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
]);
const MAX_REORG_RETRIES = 20;

/**
 * Keeps a ChainStore equal to the node's canonical chain: loads the blocks after the stored head,
 * and when the stored head is no longer the node's block at that height (a reorganisation: other
 * hash, or the node went back below it), removes stored blocks from the head down until the
 * stored head is the node's again, then loads the node's blocks from there. Each new block must
 * name the stored head as its parent; a mismatch while loading means the node reorganised
 * meanwhile and the step is repeated.
 */
export class ChainFollower {
  private running: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private startBlock: number | null = null;
  private readonly batch: number;

  constructor(
    readonly node: RpcNode,
    readonly store: ChainStore,
    private readonly opts: FollowOptions = {},
  ) {
    this.batch = Math.max(1, opts.batchBlocks ?? 16);
  }

  /** One poll, serialised with the background polling. */
  sync(): Promise<SyncResult> {
    const next = this.running.then(() => this.syncOnce());
    this.running = next.catch(() => undefined);
    return next;
  }

  /** Polls every `pollMs` until stop(); failures are logged and retried at the next poll. */
  start(pollMs: number): void {
    if (pollMs <= 0 || this.stopped) return;
    const tick = () => {
      this.timer = null;
      this.sync()
        .then((r) => {
          if (r.added || r.removed) this.opts.logger?.info({ chain_id: this.store.chainId, ...r }, 'followed the node');
        })
        .catch((err) => this.opts.logger?.warn({ chain_id: this.store.chainId, err: String(err) }, 'polling the node failed; retrying'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, pollMs);
        });
    };
    this.timer = setTimeout(tick, pollMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private async syncOnce(): Promise<SyncResult> {
    const total: SyncResult = { added: 0, removed: 0, head: null };
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await this.step();
        total.added += r.added;
        total.removed += r.removed;
        total.head = r.head;
        return total;
      } catch (err) {
        if (!(err instanceof ReorgDuringLoad) || attempt >= MAX_REORG_RETRIES) throw err;
        this.opts.logger?.debug({ chain_id: this.store.chainId, block: err.blockNumber }, 'the node reorganised while loading; again');
      }
    }
  }

  private async step(): Promise<SyncResult> {
    const { node, store } = this;
    const nodeHead = await node.blockNumber();
    let removed = 0;
    for (let tip = store.head; tip; tip = store.head) {
      const theirs = tip.block_number <= nodeHead ? await node.header(tip.block_number) : null;
      if (theirs && theirs.hash === tip.block_hash) break;
      removed += store.truncateFrom(tip.block_number);
    }
    if (removed > 0)
      this.opts.logger?.info(
        { chain_id: store.chainId, removed, head: store.head?.block_number ?? null },
        'the node reorganised: removed its orphaned blocks',
      );
    if (this.startBlock === null) {
      const from = this.opts.fromBlock ?? 0;
      this.startBlock = from < 0 ? Math.max(0, nodeHead + from + 1) : from;
    }
    let next = store.head ? store.head.block_number + 1 : this.startBlock;
    let added = 0;
    const knownTokens = new Set(store.tokenContracts());
    while (next <= nodeHead) {
      const last = Math.min(nodeHead, next + this.batch - 1);
      const numbers = Array.from({ length: last - next + 1 }, (_, i) => next + i);
      const loaded = await Promise.all(numbers.map((n) => node.loadBlock(store.chainId, n)));
      for (const b of loaded) {
        if (!b) throw new ReorgDuringLoad(next, 'the node no longer has it');
        const head = store.head;
        if (head && b.block.parent_hash !== head.block_hash)
          throw new ReorgDuringLoad(b.block.block_number, 'its parent is not the stored head');
        store.append(b);
        added++;
        next++;
      }
    }
    await this.readTokenInfo(knownTokens);
    return { added, removed, head: store.head?.block_number ?? null };
  }

  /** name/symbol/decimals of token contracts seen for the first time (once each; failures stay null). */
  private async readTokenInfo(before: Set<string>): Promise<void> {
    const fresh = this.store.tokenContracts().filter((a) => !before.has(a) && !this.store.tokenInfo.has(a));
    await Promise.all(
      fresh.map(async (address) => {
        const read = async <T>(fn: 'name' | 'symbol' | 'decimals'): Promise<T | null> => {
          const out = await this.node.call(address, encodeFunctionData({ abi: METADATA_ABI, functionName: fn }));
          if (!out || out === '0x') return null;
          try {
            return decodeFunctionResult({ abi: METADATA_ABI, functionName: fn, data: out as Hex }) as T;
          } catch {
            return null;
          }
        };
        const [name, symbol, decimals] = await Promise.all([read<string>('name'), read<string>('symbol'), read<number>('decimals')]);
        const info: TokenInfo = { name, symbol, decimals };
        this.store.tokenInfo.set(address, info);
      }),
    );
  }
}
