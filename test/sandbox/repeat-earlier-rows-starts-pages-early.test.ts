import { describe, expect, it } from 'vitest';
import { listQuery, type SandboxOptions } from '@insight-export/sandbox';
import { compareWithTruth, pageByOffset } from '../helpers/naive-offset-paging.js';
import { getJson } from '../helpers/sandbox.js';
import { ids, withSandbox } from '../helpers/knob-sandbox.js';

const limit = 40;

describe('repeatEarlierRows: pages that repeat rows an earlier page carried in an earlier block', () => {
  it('at rate 1 every page after the first starts with rows of earlier blocks that an earlier page carried, then its own rows; page 0 is served as is', async () => {
    await withSandbox({ repeatEarlierRows: 1 }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const truth = s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }));
      const truthIds = ids(truth);
      const pages = Math.ceil(truth.length / limit);
      let repeated = 0;
      for (let page = 0; page < pages; page++) {
        const { body } = await getJson(
          `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&page=${page}`,
        );
        const own = truthIds.slice(page * limit, (page + 1) * limit);
        const got = ids(body.data);
        if (page === 0) {
          expect(got).toEqual(own);
          continue;
        }
        const k = got.findIndex((id) => id === own[0]);
        expect(k).toBeGreaterThan(0);
        expect(got.length).toBe(Math.min(limit, own.length + k));
        expect(got.slice(k)).toEqual(own.slice(0, got.length - k));
        const firstOwnBlock = truth[page * limit]!.block_number;
        for (const id of got.slice(0, k)) {
          const at = truthIds.indexOf(id);
          expect(at).toBeLessThan(page * limit); // an earlier page carried it
          expect(truth[at]!.block_number).toBeLessThan(firstOwnBlock);
        }
        repeated += k;
      }
      expect(repeated).toBeGreaterThan(pages);
    });
  });

  it('at a rate below 1 some pages are served as is; the same seed draws the same pages', async () => {
    const draw = (opts: SandboxOptions) =>
      withSandbox(opts, async (s) => {
        const alice = s.data.wallets[0]!.address;
        const out: string[][] = [];
        for (let page = 1; page < 15; page++) {
          out.push(
            ids(
              (await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&page=${page}`)).body
                .data,
            ),
          );
        }
        return { out, truth: ids(s.data.allWalletTransactions(alice, listQuery({ chainIds: [1] }))) };
      });
    const a = await draw({ repeatEarlierRows: 0.5 });
    const b = await draw({ repeatEarlierRows: 0.5 });
    expect(a.out).toEqual(b.out);
    const asIs = a.out.filter((got, i) => got[0] === a.truth[(i + 1) * limit]).length;
    expect(asIs).toBeGreaterThan(0);
    expect(asIs).toBeLessThan(a.out.length);
  });

  it('a client paging by offset loses and duplicates rows under it; with the knob off it gets every row once', async () => {
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
    const repeating = await outcome({ repeatEarlierRows: 0.5 });
    expect(repeating.lost).toBeGreaterThan(0);
    expect(repeating.duplicated).toBeGreaterThan(0);
    const plain = await outcome({});
    expect([plain.lost, plain.duplicated]).toEqual([0, 0]);
  });
});
