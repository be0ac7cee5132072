/**
 * `cutFullPages` (`--cut-full-pages RATE`): a broken proxy or CDN in front of the service that drops
 * the last row of a full page. Each chain whose rows fill `limit` comes back with `limit - 1`; a
 * short page, an aggregate answer and the rate 0 are left as they are.
 */
import yargs, { type Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { sandboxCommand, sandboxOptionsFromArgs, type SandboxArgs } from '@insight-export/sandbox';
import { getJson } from '../helpers/sandbox.js';
import { withSandbox } from '../helpers/knob-sandbox.js';

describe('cutFullPages', () => {
  it('at rate 1 every full page per chain loses its last row; short pages, pages of one row and aggregates are untouched', async () => {
    await withSandbox({ cutFullPages: 1 }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const page = (qs: string) => getJson(`${s.url}/wallets/${alice}/transactions?${qs}&sort_by=block_number&limit=10`);
      const full = await page('chain_id=1&chain_id=8453');
      const perChain = (rows: { chain_id: unknown }[]) =>
        rows.reduce((m, r) => m.set(String(r.chain_id), (m.get(String(r.chain_id)) ?? 0) + 1), new Map<string, number>());
      expect(perChain(full.body.data)).toEqual(
        new Map([
          ['1', 9],
          ['8453', 9],
        ]),
      );

      await withSandbox({}, async (plain) => {
        const whole = await getJson(`${plain.url}/wallets/${alice}/transactions?chain_id=1&chain_id=8453&sort_by=block_number&limit=10`);
        // The rows kept are the full page's, without each chain's last one.
        const kept = whole.body.data.filter(
          (r: { chain_id: string }, i: number, all: { chain_id: string }[]) => all.findLastIndex((x) => x.chain_id === r.chain_id) !== i,
        );
        expect(full.body.data).toEqual(kept);

        // A short page (the last rows of the wallet on chain 1) is served whole.
        const last = await getJson(`${plain.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&sort_order=desc&limit=1`);
        const from = last.body.data[0].block_number;
        const short = await page(`chain_id=1&filter_block_number_gte=${from}`);
        const shortPlain = await getJson(
          `${plain.url}/wallets/${alice}/transactions?chain_id=1&filter_block_number_gte=${from}&sort_by=block_number&limit=10`,
        );
        expect(short.body.data.length).toBeLessThan(10);
        expect(short.body.data).toEqual(shortPlain.body.data);
      });

      // A page of one row is spared (a client's probes for one row).
      const one = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=1`);
      expect(one.body.data).toHaveLength(1);

      const agg = await getJson(
        `${s.url}/wallets/${alice}/transactions?chain_id=1&chain_id=8453&group_by=chain_id&aggregate=count() as n&limit=2`,
      );
      expect(agg.body.aggregations).toHaveLength(2);
    });
  });

  it('at rate 0 (the default) full pages are served whole; a rate outside 0..1 is refused', async () => {
    await withSandbox({ cutFullPages: 0 }, async (s) => {
      const alice = s.data.wallets[0]!.address;
      const { body } = await getJson(`${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=10`);
      expect(body.data).toHaveLength(10);
    });
    await expect(withSandbox({ cutFullPages: 2 }, async () => undefined)).rejects.toThrow(/invalid cutFullPages 2/);
  });

  it('the sandbox command takes it as --cut-full-pages RATE', () => {
    const parse = (argv: string[]) =>
      sandboxOptionsFromArgs((sandboxCommand.builder as (y: Argv) => Argv)(yargs(argv)).parseSync() as unknown as SandboxArgs, {});
    expect(parse(['--cut-full-pages', '0.25']).cutFullPages).toBe(0.25);
    expect(parse([]).cutFullPages).toBeUndefined();
  });
});
