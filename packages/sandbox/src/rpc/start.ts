import type { Logger } from '../../../../src/shared-with-sandbox.js';
import { SandboxOptionsError } from '../errors.js';
import { serveReadInterface, type SandboxOptions, type SandboxServer } from '../server.js';
import { RpcSandboxData } from './data.js';
import { ChainFollower, type SyncResult } from './follower.js';
import { RpcNode, type ReceiptsMode } from './node.js';
import { AbiRegistry, loadUserAbis } from './registry.js';
import { ChainStore } from './store.js';

export interface RpcSandboxOptions extends Omit<SandboxOptions, 'seed' | 'transactions' | 'data'> {
  /** JSON-RPC node URL(s), one per chain (the chain id is asked from each node). */
  rpc: string | readonly string[];
  /** ABI files for decoding: `file.json` (any contract) or `0xADDRESS=file.json`. */
  abis?: readonly string[] | undefined;
  /** Poll the nodes for new blocks and reorganisations this often; 0 = only on sync(). Default 1000. */
  pollMs?: number | undefined;
  /** First block to load (negative: that many blocks below the head at start). Default 0. */
  fromBlock?: number | undefined;
  /** Default 'auto': eth_getBlockReceipts when the node has it, else one receipt per transaction. */
  receipts?: ReceiptsMode | undefined;
  /** Blocks fetched concurrently while loading. Default 16. */
  batchBlocks?: number | undefined;
  logger?: Logger | undefined;
}

export interface RpcSandbox extends SandboxServer<RpcSandboxData> {
  /** Polls every node once now (serialised with the background polling): afterwards the store is the node's chain as of this call. */
  sync(): Promise<SyncResult[]>;
  /** How each node's receipts are read now ('block' or 'transaction' once detected). */
  receiptsModes(): ReceiptsMode[];
}

const RECEIPTS_MODES: ReceiptsMode[] = ['auto', 'block', 'transaction'];

function validate(opts: RpcSandboxOptions): string[] {
  const urls = typeof opts.rpc === 'string' ? [opts.rpc] : [...opts.rpc];
  if (urls.length === 0) throw new SandboxOptionsError('no --rpc URL given');
  for (const u of urls) {
    let ok: boolean;
    try {
      ok = ['http:', 'https:'].includes(new URL(u).protocol);
    } catch {
      ok = false;
    }
    if (!ok)
      throw new SandboxOptionsError(`--rpc ${JSON.stringify(u)} is not an http(s) URL`, { hint: 'e.g. --rpc http://127.0.0.1:8545' });
  }
  if (opts.pollMs !== undefined && !(Number.isFinite(opts.pollMs) && opts.pollMs >= 0)) {
    throw new SandboxOptionsError(`invalid poll interval ${opts.pollMs}`, { hint: 'milliseconds >= 0 (0 = do not poll)' });
  }
  if (opts.fromBlock !== undefined && !Number.isSafeInteger(opts.fromBlock))
    throw new SandboxOptionsError(`invalid first block ${opts.fromBlock}`);
  if (opts.receipts !== undefined && !RECEIPTS_MODES.includes(opts.receipts)) {
    throw new SandboxOptionsError(`invalid receipts mode ${opts.receipts}`, { hint: `one of ${RECEIPTS_MODES.join(', ')}` });
  }
  return urls;
}

/**
 * The sandbox over real chains: loads blocks, transactions with their receipts, and logs from
 * JSON-RPC nodes (anvil, hardhat, any EVM node), serves the read interface over them, and keeps
 * following the nodes (new blocks, reorganised blocks replaced) until closed.
 */
export async function startRpcSandbox(opts: RpcSandboxOptions): Promise<RpcSandbox> {
  const urls = validate(opts);
  const registry = new AbiRegistry(await loadUserAbis(opts.abis ?? []));
  const nodes = urls.map((u) => new RpcNode(u, { receipts: opts.receipts }));
  const chainIds = await Promise.all(nodes.map((n) => n.chainId()));
  const seen = new Map<number, string>();
  chainIds.forEach((id, i) => {
    const other = seen.get(id);
    if (other) throw new SandboxOptionsError(`--rpc ${urls[i]} and ${other} are both chain ${id}`, { hint: 'give one node per chain' });
    seen.set(id, urls[i]!);
  });
  const stores = nodes.map((n, i) => new ChainStore(chainIds[i]!, n.url));
  const followers = nodes.map(
    (n, i) => new ChainFollower(n, stores[i]!, { fromBlock: opts.fromBlock, batchBlocks: opts.batchBlocks, logger: opts.logger }),
  );
  const syncAll = () => Promise.all(followers.map((f) => f.sync()));
  await syncAll();
  const data = new RpcSandboxData(stores, registry);
  const server = await serveReadInterface(data, opts);
  for (const f of followers) f.start(opts.pollMs ?? 1000);
  return {
    ...server,
    sync: syncAll,
    receiptsModes: () => nodes.map((n) => n.receipts),
    async close() {
      await Promise.all(followers.map((f) => f.stop()));
      await server.close();
    },
  };
}
