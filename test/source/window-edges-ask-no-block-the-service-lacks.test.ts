/**
 * The upper edge of a time window (the last block before its end) is searched with resolve/<n>.
 * Under the indexer profile every block the service lacks is a 500 with an empty body, retried
 * before it counts as absent: a window ending past the head found by the head search ends at that
 * head without asking for any block above it, and a window ending before the chain's first block
 * has no edge, found in a bisection's worth of requests rather than a walk block by block.
 */
import { expect, it } from 'vitest';
import { SANDBOX_PROFILES } from '../../src/sandbox/profiles.js';
import { BlockLookup } from '../../src/source/block-by-number.js';
import { findChainHead, resolveProbe } from '../../src/source/chain-head.js';
import { InsightClient } from '../../src/source/client.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000, ...SANDBOX_PROFILES.indexer });
const CHAIN = 8453;

function lookup() {
  const client = new InsightClient({ baseUrl: sandbox.url, backoff: { baseMs: 1, maxMs: 5 } });
  const asked: number[] = [];
  const counting = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== 'resolve') return Reflect.get(target, prop, receiver) as unknown;
      return (input: string, opts: { chainIds?: number[] }) => {
        asked.push(Number(input));
        return target.resolve(input, opts);
      };
    },
  });
  const blocks = new BlockLookup(counting, async (chainId) => {
    const { head } = await findChainHead(resolveProbe(client, chainId), chainId, [sandbox.data.chain(chainId)!.firstBlock]);
    return { block: head.block_number, time: head.block_timestamp };
  });
  return { blocks, asked };
}

it('a window ending past the head ends at the head, asking for no block above it', async () => {
  const chain = sandbox.data.chain(CHAIN)!;
  const { blocks, asked } = lookup();
  const edge = await blocks.lastBlockBefore(CHAIN, chain.headTimestamp + 3_600);
  expect(edge?.block_number).toBe(chain.headBlock);
  expect(asked.filter((n) => n > chain.headBlock)).toEqual([]);
});

it('a window ending before the first block has no edge, found by bisecting', async () => {
  const chain = sandbox.data.chain(CHAIN)!;
  const { blocks, asked } = lookup();
  expect(await blocks.lastBlockBefore(CHAIN, chain.firstTimestamp - 86_400)).toBeNull();
  // Blocks below the first cost a retried 500 each: a bisection's worth, not a walk.
  const absent = asked.filter((n) => n < chain.firstBlock).length;
  expect(absent).toBeLessThanOrEqual(Math.ceil(Math.log2(chain.headBlock - chain.firstBlock + 2)) + 2);
  expect((await blocks.lastBlockBefore(CHAIN, chain.firstTimestamp + 1))?.block_number).toBe(chain.firstBlock);
});
