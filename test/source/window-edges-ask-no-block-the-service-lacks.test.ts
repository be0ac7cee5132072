/**
 * The upper edge of a time window (the last block before its end) is searched with resolve/<n>.
 * Under the indexer profile every block the service lacks is a 500 with an empty body, retried
 * before it counts as absent: a window ending past the head found by the head search ends at that
 * head without asking for any block above it, and a window ending before the chain's first block
 * has no edge, found in a bisection's worth of requests rather than a walk block by block.
 */
import { expect, it } from 'vitest';
import { SANDBOX_PROFILES } from '@insight-export/sandbox';
import { countingBlockLookup } from '../helpers/block-lookup.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000, ...SANDBOX_PROFILES.indexer });
const CHAIN = 8453;

it('a window ending past the head ends at the head, asking for no block above it', async () => {
  const chain = sandbox.data.chain(CHAIN)!;
  const { blocks, asked } = countingBlockLookup(sandbox);
  const edge = await blocks.lastBlockBefore(CHAIN, chain.headTimestamp + 3_600);
  expect(edge?.block_number).toBe(chain.headBlock);
  expect(asked.filter((n) => n > chain.headBlock)).toEqual([]);
});

it('a window ending before the first block has no edge, found by bisecting', async () => {
  const chain = sandbox.data.chain(CHAIN)!;
  const { blocks, asked } = countingBlockLookup(sandbox);
  expect(await blocks.lastBlockBefore(CHAIN, chain.firstTimestamp - 86_400)).toBeNull();
  // Blocks below the first cost a retried 500 each: a bisection's worth, not a walk.
  const absent = asked.filter((n) => n < chain.firstBlock).length;
  expect(absent).toBeLessThanOrEqual(Math.ceil(Math.log2(chain.headBlock - chain.firstBlock + 2)) + 2);
  expect((await blocks.lastBlockBefore(CHAIN, chain.firstTimestamp + 1))?.block_number).toBe(chain.firstBlock);
});
