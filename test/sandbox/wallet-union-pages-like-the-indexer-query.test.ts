import { describe, expect, it } from 'vitest';
import { listQuery, type SandboxOptions } from '@insight-export/sandbox';
import { compareWithTruth, pageByOffset, rowId } from '../helpers/naive-offset-paging.js';
import { getJson } from '../helpers/sandbox.js';
import { ids, withSandbox } from '../helpers/knob-sandbox.js';

describe('walletUnion: the wallet route as the indexer UNION ALL query', () => {
  it('page p = rows [p*l, p*l+l) of the from-half [p*l, p*l+2l) and to-half [p*l, p*l+2l), concatenated in an order drawn per request', async () => {
    await withSandbox({ walletUnion: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const from = truth.filter((t) => t.from_address === alice);
      const to = truth.filter((t) => t.to_address === alice);
      expect(to.length).toBeGreaterThan(60);
      const limit = 10;
      const orders = new Set<string>();
      for (let round = 0; round < 6; round++) {
        for (const page of [0, 1, 2, 3, 4]) {
          const { status, body } = await getJson(
            `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&page=${page}`,
          );
          expect(status).toBe(200);
          const half = (rows: typeof truth) => rows.slice(page * limit, page * limit + 2 * limit);
          const fromFirst = [...half(from), ...half(to)].slice(page * limit, page * limit + limit);
          const toFirst = [...half(to), ...half(from)].slice(page * limit, page * limit + limit);
          const got = ids(body.data);
          if (page === 4)
            expect(got).toEqual([]); // both halves hold 2l rows: the outer offset 4l is past them
          else if (JSON.stringify(got) === JSON.stringify(ids(fromFirst))) orders.add('from first');
          else {
            expect(got).toEqual(ids(toFirst));
            orders.add('to first');
          }
        }
      }
      expect(orders).toEqual(new Set(['from first', 'to first']));
    });
  });

  it('a self-transfer comes once from each half', async () => {
    await withSandbox({ walletUnion: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const self = truth.find((t) => t.from_address === alice && t.to_address === alice)!;
      const { body } = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&filter_hash=${self.hash}`);
      expect(ids(body.data)).toEqual([rowId(self), rowId(self)]);
    });
  });

  it('aggregate alone: one row per half; with group_by or with sort_by the query fails (500)', async () => {
    await withSandbox({ walletUnion: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const counts = [truth.filter((t) => t.from_address === alice).length, truth.filter((t) => t.to_address === alice).length];
      const base = `${s.url}/wallets/${alice}/transactions?chain_id=1`;
      const agg = await getJson(`${base}&aggregate=count() as n`);
      expect(agg.status).toBe(200);
      expect(agg.body.aggregations.map((r: any) => r.n).sort((a: number, b: number) => a - b)).toEqual([...counts].sort((a, b) => a - b));
      expect((await getJson(`${base}&aggregate=count() as n&page=1`)).body.aggregations).toEqual([]);
      for (const qs of ['group_by=chain_id&aggregate=count() as n', 'aggregate=count() as n&sort_by=block_number']) {
        const failed = await getJson(`${base}&${qs}`);
        expect(failed.status).toBe(500);
        expect(failed.body).toEqual({ error: 'An unexpected error occurred.' });
      }
      // the contract's answer for the same query: one row over the whole wallet
      await withSandbox({}, async (c) => {
        expect((await getJson(`${c.url}/wallets/${alice}/transactions?chain_id=1&aggregate=count() as n`)).body.aggregations).toEqual([
          { n: truth.length },
        ]);
      });
    });
  });

  it('group_by alone: the distinct keys of the union rows (each half LIMIT 2l OFFSET p*l), then the outer LIMIT l OFFSET p*l', async () => {
    await withSandbox({ walletUnion: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const [limit, page] = [10, 1];
      const halfBlocks = (side: 'from_address' | 'to_address') =>
        truth
          .filter((t) => t[side] === alice)
          .slice(page * limit, page * limit + 2 * limit)
          .map((t) => t.block_number);
      const distinct = [...new Set([...halfBlocks('from_address'), ...halfBlocks('to_address')])].sort((a, b) => a - b);
      expect(distinct.length).toBeGreaterThan(2 * limit);
      const { status, body } = await getJson(
        `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&group_by=block_number&limit=${limit}&page=${page}`,
      );
      expect(status).toBe(200);
      expect(body.aggregations).toEqual(distinct.slice(page * limit, (page + 1) * limit).map((block_number) => ({ block_number })));
    });
  });

  it('a client paging by offset until a short page loses and duplicates rows; with the knob off it gets every row once', async () => {
    const limit = 40; // 721 rows: 19 pages, within the contract's page cap
    // Eight runs of the same paging: the half order is drawn per request, so each run sees other pages.
    const outcomes = (opts: SandboxOptions) =>
      withSandbox(opts, async (s) => {
        const alice = s.data.wallets[0]!.address;
        const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
        const url = (page: number) => `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&page=${page}`;
        const runs = [];
        for (let run = 0; run < 8; run++) runs.push(compareWithTruth(await pageByOffset(url, limit), truth));
        return runs;
      });
    const union = await outcomes({ walletUnion: true });
    for (const run of union) expect(run.lost).toBeGreaterThan(100);
    expect(union.reduce((n, run) => n + run.duplicated, 0)).toBeGreaterThan(0);
    for (const run of await outcomes({})) expect([run.lost, run.duplicated]).toEqual([0, 0]);
  });
});
