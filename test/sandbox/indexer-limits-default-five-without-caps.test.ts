import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMIT, listQuery, type SandboxOptions } from '@insight-export/sandbox';
import { compareWithTruth, pageByOffset } from '../helpers/naive-offset-paging.js';
import { getJson } from '../helpers/sandbox.js';
import { ids, withSandbox } from '../helpers/knob-sandbox.js';

describe("indexerLimits: the indexer's limit and page", () => {
  it('default limit 5 (also for limit=0), no cap on limit or page, a negative limit drops LIMIT and a negative page OFFSET', async () => {
    await withSandbox({ indexerLimits: true }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = ids(s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] })));
      expect(truth.length).toBeGreaterThan(700);
      const get = async (qs: string) => getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number${qs}`);
      for (const qs of ['', '&limit=0']) {
        const { status, body } = await get(qs);
        expect(status).toBe(200);
        expect(body.meta.limit_per_chain).toBe(5);
        expect(ids(body.data)).toEqual(truth.slice(0, 5));
      }
      expect(ids((await get('&limit=5000')).body.data)).toEqual(truth);
      expect(ids((await get('&limit=10&page=50')).body.data)).toEqual(truth.slice(500, 510));
      expect(ids((await get('&limit=-1&page=3')).body.data)).toEqual(truth);
      expect(ids((await get('&limit=10&page=-2')).body.data)).toEqual(truth.slice(0, 10));
      expect((await get('&limit=ten')).status).toBe(400);
    });
  });

  it('the contract keeps its default 20 and its caps', async () => {
    await withSandbox({}, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const get = async (qs: string) => getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number${qs}`);
      expect((await get('')).body.data).toHaveLength(DEFAULT_LIMIT);
      for (const qs of ['&limit=5000', '&limit=0', '&limit=-1', '&page=21', '&page=-1']) expect((await get(qs)).status).toBe(400);
    });
  });

  it("a client that relies on the contract's default limit stops after the first page and loses rows; with the knob off it gets every row once", async () => {
    const outcome = (opts: SandboxOptions) =>
      withSandbox(opts, async (s) => {
        const bob = s.data.wallets[1]!.address;
        const truth = s.data.allWalletTransactions(bob, listQuery({ chainIds: [1] }));
        expect(truth.length).toBeGreaterThan(100);
        const rows = await pageByOffset(
          (page) => `${s.url}/wallets/${bob}/transactions?chain_id=1&sort_by=block_number&page=${page}`,
          DEFAULT_LIMIT,
        );
        return compareWithTruth(rows, truth);
      });
    const indexer = await outcome({ indexerLimits: true });
    expect(indexer.lost).toBeGreaterThan(100);
    expect(indexer.rows).toHaveLength(5);
    const contract = await outcome({});
    expect([contract.lost, contract.duplicated]).toEqual([0, 0]);
  });
});
