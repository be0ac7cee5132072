import { InsightExportError } from '../errors.js';
import type { InsightClient } from './client.js';
import type { BlockRecord } from './records.js';

export class ChainHeadError extends InsightExportError {
  override name = 'ChainHeadError';
}

/**
 * The newest block the service has for a chain. The read interface has no "latest block"
 * operation, so this searches with `resolve/<number>` (a block number resolves to its block while
 * it exists): doubling until a number is past the head, then bisecting. About 2*log2(head)
 * requests per chain, asked once per run. `knownBlock` (a block that exists, such as the newest row
 * of one of the job's targets) lets the search start near the head on indexes that do not start at 0.
 */
export async function findChainHead(client: InsightClient, chainId: number, knownBlock?: number): Promise<BlockRecord> {
  const blockAt = async (n: number): Promise<BlockRecord | null> => {
    const res = await client.resolve(String(n), { chainIds: [chainId] });
    return res.data.blocks.find((b) => b.chain_id === chainId && b.block_number === n) ?? null;
  };
  // Start from a block known to exist (e.g. the newest row of a target), else from genesis.
  let lowN = knownBlock ?? 0;
  let low = await blockAt(lowN);
  if (!low) {
    // Some chains' indexes start later than genesis: find any block by doubling first.
    let n = 1;
    while (!low && n < 2 ** 40) {
      low = await blockAt(n);
      lowN = n;
      n *= 2;
    }
    if (!low) throw new ChainHeadError(`No block found on chain ${chainId}`, { hint: 'Check the chain id and the base URL.' });
  }
  // Double until past the head.
  let step = 1;
  let high = lowN + step;
  let highBlock = await blockAt(high);
  while (highBlock) {
    low = highBlock;
    lowN = high;
    step *= 2;
    high = lowN + step;
    highBlock = await blockAt(high);
  }
  // Bisect (lowN exists, high does not).
  while (high - lowN > 1) {
    const mid = lowN + Math.floor((high - lowN) / 2);
    const b = await blockAt(mid);
    if (b) {
      low = b;
      lowN = mid;
    } else high = mid;
  }
  return low;
}
