/**
 * The upper edge of a time window (the last block before its end) is proven by a pair of
 * neighbours: a block before the end and the block after it at or past it. On a chain of steady
 * block times the interpolated estimate is right, so once a block or two are known each edge is
 * its estimate and its successor, asked together: two requests in one round trip, whatever the
 * number of windows searched side by side.
 */
import { expect, it } from 'vitest';
import { BlockLookup } from '../../src/source/block-by-number.js';
import { findChainHead, resolveProbe } from '../../src/source/chain-head.js';
import { InsightClient } from '../../src/source/client.js';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const HOUR = 3_600;

function lookup() {
  const client = new InsightClient({ baseUrl: sandbox.url, backoff: { baseMs: 1, maxMs: 5 } });
  let inFlight = 0;
  const asked: number[] = [];
  /** Requests sent while none was in flight: the search's round trips. */
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

for (const chainId of [1, 8453, 42161]) {
  it(`chain ${chainId}: after the first edge, each hour's edge costs two requests in one round trip`, async () => {
    const chain = sandbox.data.chain(chainId)!;
    const { blocks, asked, rounds } = lookup();
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
