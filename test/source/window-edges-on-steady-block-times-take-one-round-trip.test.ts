/**
 * The upper edge of a time window (the last block before its end) is proven by a pair of
 * neighbours: a block before the end and the block after it at or past it. On a chain of steady
 * block times the interpolated estimate is right, so once a block or two are known each edge is
 * its estimate and its successor, asked together: two requests in one round trip, whatever the
 * number of windows searched side by side.
 */
import { expect, it } from 'vitest';
import { countingBlockLookup } from '../helpers/block-lookup.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const HOUR = 3_600;

for (const chainId of [1, 8453, 42161]) {
  it(`chain ${chainId}: after the first edge, each hour's edge costs two requests in one round trip`, async () => {
    const chain = sandbox.data.chain(chainId)!;
    const { blocks, asked, rounds } = countingBlockLookup(sandbox);
    /** The last block before `time`, from the sandbox's own block times. */
    const truth = (time: number) => chain.firstBlock + Math.ceil((time - chain.firstTimestamp) / chain.blockTimeSeconds) - 1;
    const first = Math.ceil(chain.firstTimestamp / HOUR) * HOUR + HOUR;
    const windows = Math.floor((chain.headTimestamp - first) / HOUR);
    expect(windows).toBeGreaterThanOrEqual(8);

    expect((await blocks.lastBlockBefore(chainId, first))?.block_number).toBe(truth(first));
    for (let h = 1; h < windows; h++) {
      const time = first + h * HOUR;
      const before = { asked: asked.length, rounds: rounds() };
      expect((await blocks.lastBlockBefore(chainId, time))?.block_number).toBe(truth(time));
      expect({ requests: asked.length - before.asked, rounds: rounds() - before.rounds }).toEqual({ requests: 2, rounds: 1 });
    }
  });
}
