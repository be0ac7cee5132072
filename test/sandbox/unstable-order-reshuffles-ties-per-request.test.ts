import { describe, expect, it } from 'vitest';
import { listQuery, type SandboxOptions } from '@insight-export/sandbox';
import { compareWithTruth, pageByOffset } from '../helpers/naive-offset-paging.js';
import { getJson } from '../helpers/sandbox.js';
import { ids, withSandbox } from '../helpers/knob-sandbox.js';

const sorted = (xs: string[]) => [...xs].sort();

describe('unstableOrder: the order ClickHouse gives ties and unordered queries', () => {
  it('rows tied on block_number come in another order on some request; blocks stay sorted and every row is there', async () => {
    await withSandbox({ unstableOrder: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const orders = new Set<string>();
      for (const order of ['asc', 'desc']) {
        for (let round = 0; round < 4; round++) {
          const { body } = await getJson(
            `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&sort_order=${order}&limit=1000`,
          );
          const blocks = body.data.map((r: any) => r.block_number);
          expect(blocks).toEqual([...blocks].sort((a, b) => (order === 'asc' ? a - b : b - a)));
          expect(sorted(ids(body.data))).toEqual(sorted(ids(truth)));
          orders.add(JSON.stringify(ids(body.data)));
        }
      }
      expect(orders.size).toBe(8);
    });
  });

  it('without sort_by rows and groups come in no order at all, another on each request', async () => {
    await withSandbox({ unstableOrder: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = ids(s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] })));
      const a = ids((await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&limit=1000`)).body.data);
      const b = ids((await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&limit=1000`)).body.data);
      expect(sorted(a)).toEqual(sorted(truth));
      expect(a).not.toEqual(truth);
      expect(a).not.toEqual(b);
      const groups = async () =>
        (await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&group_by=block_number&aggregate=count() as n&limit=500`)).body
          .aggregations;
      const [g1, g2] = [await groups(), await groups()];
      expect(g1).not.toEqual(g2);
      const byBlock = (rows: any[]) => [...rows].sort((x, y) => x.block_number - y.block_number);
      expect(byBlock(g1)).toEqual(byBlock(g2));
    });
  });

  it('a client paging by offset loses and duplicates rows of blocks that straddle a page boundary; with the knob off it gets every row once', async () => {
    const limit = 40;
    const outcomes = (opts: SandboxOptions) =>
      withSandbox(opts, async (s) => {
        const alice = s.data.wallets[0]!.address;
        const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
        const url = (page: number) => `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&page=${page}`;
        const runs = [];
        for (let run = 0; run < 4; run++) runs.push(compareWithTruth(await pageByOffset(url, limit), truth));
        return runs;
      });
    const unstable = await outcomes({ unstableOrder: true });
    for (const run of unstable) {
      expect(run.lost).toBeGreaterThan(0);
      expect(run.duplicated).toBeGreaterThan(0);
    }
    for (const run of await outcomes({})) expect([run.lost, run.duplicated]).toEqual([0, 0]);
  });
});
