import type { Sandbox } from '@insight-export/sandbox';
import { BlockLookup } from '../../src/source/block-by-number.js';
import { findChainHead, resolveProbe } from '../../src/source/chain-head.js';
import { InsightClient } from '../../src/source/client.js';

/**
 * A BlockLookup against the sandbox, anchored by a head search as a run's is, that counts the
 * blocks it asks for (`asked`) and its round trips (`rounds`: requests sent while none was in flight).
 */
export function countingBlockLookup(sandbox: Sandbox) {
  const client = new InsightClient({ baseUrl: sandbox.url, backoff: { baseMs: 1, maxMs: 5 } });
  const asked: number[] = [];
  let inFlight = 0;
  let rounds = 0;
  const counting = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'resolve') return Reflect.get(target, prop, receiver) as unknown;
      return async (input: string, opts: { chainIds?: number[] }) => {
        asked.push(Number(input));
        if (inFlight++ === 0) rounds++;
        try {
          return await target.resolve(input, opts);
        } finally {
          inFlight--;
        }
      };
    },
  });
  const blocks = new BlockLookup(counting, async (chainId) => {
    const { head } = await findChainHead(resolveProbe(client, chainId), chainId, [sandbox.data.chain(chainId)!.firstBlock]);
    return { block: head.block_number, time: head.block_timestamp };
  });
  return { blocks, asked, rounds: () => rounds };
}
