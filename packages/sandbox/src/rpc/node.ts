import { createPublicClient, http, numberToHex, type PublicClient } from 'viem';
import { errorMessage, walk } from '../../../../src/shared-with-sandbox.js';
import { loadedBlock, num, ReorgDuringLoad, type LoadedBlock, type RpcBlock, type RpcReceipt } from './convert.js';
import { RpcNodeError } from './errors.js';

/** How receipts are read: one eth_getBlockReceipts per block, one eth_getTransactionReceipt per transaction, or the first when the node has it. */
export type ReceiptsMode = 'auto' | 'block' | 'transaction';

export interface RpcNodeOptions {
  receipts?: ReceiptsMode | undefined;
  /** Per request, default 30 s. */
  timeoutMs?: number | undefined;
}

export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
}

/** -32601 method not found, -32004 method not supported; some nodes only say so in the message. */
export function isMethodUnsupported(err: unknown): boolean {
  const code = (e: unknown) => (e as { code?: unknown } | null)?.code;
  if (walk(err, (e) => code(e) === -32601 || code(e) === -32004) !== null) return true;
  return /method .*(not found|not supported|not available|does not exist)|unsupported method|unknown method/i.test(errorMessage(err));
}

/**
 * A JSON-RPC node read through viem's public client (HTTP, JSON-RPC batches). Sends raw
 * execution-apis requests: the sandbox converts quantities itself (convert.ts).
 */
export class RpcNode {
  readonly client: PublicClient;
  /** 'auto' until the node has answered (or refused) eth_getBlockReceipts once. */
  receipts: ReceiptsMode;

  constructor(
    readonly url: string,
    opts: RpcNodeOptions = {},
  ) {
    this.receipts = opts.receipts ?? 'auto';
    this.client = createPublicClient({
      transport: http(url, { batch: { batchSize: 100, wait: 0 }, retryCount: 2, timeout: opts.timeoutMs ?? 30_000 }),
    });
  }

  private async request<T>(method: string, params: unknown[]): Promise<T> {
    try {
      return (await this.client.request({ method, params } as never)) as T;
    } catch (err) {
      if (isMethodUnsupported(err)) throw err;
      throw new RpcNodeError(`JSON-RPC ${method} failed at ${this.url}`, {
        details: errorMessage(err).split('\n')[0],
        hint: 'Is the node running and is the --rpc URL right (e.g. http://127.0.0.1:8545)?',
        cause: err,
      });
    }
  }

  async chainId(): Promise<number> {
    return num(await this.request<string>('eth_chainId', []), 'eth_chainId');
  }

  async blockNumber(): Promise<number> {
    return num(await this.request<string>('eth_blockNumber', []), 'eth_blockNumber');
  }

  async header(n: number): Promise<BlockHeader | null> {
    const b = await this.request<RpcBlock | null>('eth_getBlockByNumber', [numberToHex(n), false]);
    return b ? { number: num(b.number, 'block.number'), hash: b.hash.toLowerCase(), parentHash: b.parentHash.toLowerCase() } : null;
  }

  /** Block n with its transactions, receipts and logs; null when the node has no block n (any more). */
  async loadBlock(chainId: number, n: number): Promise<LoadedBlock | null> {
    const raw = await this.request<RpcBlock | null>('eth_getBlockByNumber', [numberToHex(n), true]);
    if (!raw) return null;
    const receipts = await this.blockReceipts(raw);
    return loadedBlock(chainId, raw, receipts);
  }

  private detecting: Promise<void> | null = null;

  private async blockReceipts(raw: RpcBlock): Promise<RpcReceipt[]> {
    if (raw.transactions.length === 0) return [];
    if (this.receipts === 'auto') {
      // One caller finds out whether the node has eth_getBlockReceipts; concurrent loads wait for it.
      if (this.detecting) {
        await this.detecting;
        return this.blockReceipts(raw);
      }
      let detected!: () => void;
      this.detecting = new Promise((resolve) => (detected = resolve));
      try {
        return await this.viaBlockReceipts(raw);
      } catch (err) {
        if (!isMethodUnsupported(err)) throw err;
        this.receipts = 'transaction';
        return this.viaTransactionReceipts(raw);
      } finally {
        this.detecting = null;
        detected();
      }
    }
    return this.receipts === 'block' ? this.viaBlockReceipts(raw) : this.viaTransactionReceipts(raw);
  }

  private async viaBlockReceipts(raw: RpcBlock): Promise<RpcReceipt[]> {
    let receipts: RpcReceipt[] | null;
    try {
      receipts = await this.request<RpcReceipt[] | null>('eth_getBlockReceipts', [raw.number]);
    } catch (err) {
      if (this.receipts === 'auto' || err instanceof RpcNodeError) throw err;
      throw new RpcNodeError(`JSON-RPC eth_getBlockReceipts failed at ${this.url}`, {
        details: errorMessage(err).split('\n')[0],
        hint: 'The node lacks eth_getBlockReceipts: use --receipts transaction (or auto).',
        cause: err,
      });
    }
    if (this.receipts === 'auto') this.receipts = 'block';
    if (!receipts) throw new ReorgDuringLoad(Number(raw.number), 'eth_getBlockReceipts found no block');
    return receipts;
  }

  private async viaTransactionReceipts(raw: RpcBlock): Promise<RpcReceipt[]> {
    const hashes = raw.transactions.map((t) => (typeof t === 'string' ? t : t.hash));
    const receipts = await Promise.all(hashes.map((h) => this.request<RpcReceipt | null>('eth_getTransactionReceipt', [h])));
    return receipts.map((r, i) => {
      if (!r) throw new ReorgDuringLoad(Number(raw.number), `no receipt for ${hashes[i]}`);
      return r;
    });
  }

  /** eth_call at the latest block; null when it reverts or fails. */
  async call(to: string, data: string): Promise<string | null> {
    try {
      return await this.request<string>('eth_call', [{ to, data }, 'latest']);
    } catch {
      return null;
    }
  }
}
