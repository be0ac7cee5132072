import { describe, expect, it } from 'vitest';
import { OK_ERROR_MESSAGE, listQuery, type SandboxOptions } from '@insight-export/sandbox';
import { compareWithTruth, pageByOffset } from '../helpers/naive-offset-paging.js';
import { getJson } from '../helpers/sandbox.js';
import { withSandbox } from '../helpers/knob-sandbox.js';

const limit = 40;

describe('HTTP 200 answers that are not a page', () => {
  it('okErrorBody: at rate 1 every list answer is 200 with only {"error"}; other routes answer as usual', async () => {
    await withSandbox({ okErrorBody: 1 }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      for (const qs of ['sort_by=block_number&limit=10', 'aggregate=count() as n']) {
        const { status, body } = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&${qs}`);
        expect(status).toBe(200);
        expect(body).toEqual({ error: OK_ERROR_MESSAGE });
      }
      const token = s.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
      const events = await getJson(`${s.url}/events/${token.address}/Transfer(address,address,uint256)?chain_id=1`);
      expect([events.status, events.body]).toEqual([200, { error: OK_ERROR_MESSAGE }]);
      const resolved = await getJson(`${s.url}/resolve/alice.eth`);
      expect(resolved.body.data.address).toBe(alice);
    });
  });

  it('okWithoutData: at rate 1 a rows answer has meta and data null or no data; aggregations are untouched', async () => {
    await withSandbox({ okWithoutData: 1 }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const shapes = new Set<string>();
      for (let i = 0; i < 12; i++) {
        const { status, body } = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=10`);
        expect(status).toBe(200);
        expect(body.meta.limit_per_chain).toBe(10);
        shapes.add('data' in body ? `data ${JSON.stringify(body.data)}` : 'no data');
      }
      expect(shapes).toEqual(new Set(['data null', 'no data']));
      const agg = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&aggregate=count() as n`);
      expect(agg.body.aggregations).toHaveLength(1);
    });
  });

  it('both rates draw per request from the seed: some answers are pages, the same ones on a second server', async () => {
    const draw = (opts: SandboxOptions) =>
      withSandbox(opts, async (s) => {
        const alice = s.data.wallets[0]!.address;
        const kinds: string[] = [];
        for (let i = 0; i < 30; i++) {
          const { body } = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=10`);
          kinds.push(body.error !== undefined ? 'error' : Array.isArray(body.data) ? 'page' : 'no data');
        }
        return kinds;
      });
    const a = await draw({ okErrorBody: 0.3, okWithoutData: 0.3 });
    expect(new Set(a)).toEqual(new Set(['error', 'page', 'no data']));
    expect(await draw({ okErrorBody: 0.3, okWithoutData: 0.3 })).toEqual(a);
  });

  it('a client paging by offset that reads a missing data as an empty page loses rows under either; with the knobs off it gets every row once', async () => {
    const outcome = (opts: SandboxOptions) =>
      withSandbox(opts, async (s) => {
        const alice = s.data.wallets[0]!.address;
        const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
        const rows = await pageByOffset(
          (page) => `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&page=${page}`,
          limit,
        );
        return compareWithTruth(rows, truth);
      });
    for (const opts of [{ okErrorBody: 0.3 }, { okWithoutData: 0.3 }]) expect((await outcome(opts)).lost).toBeGreaterThan(limit);
    const plain = await outcome({});
    expect([plain.lost, plain.duplicated]).toEqual([0, 0]);
  });
});
