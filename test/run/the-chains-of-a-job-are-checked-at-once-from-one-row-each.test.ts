/**
 * Before its first write a run checks that the service serves each chain of the job (a chain it
 * does not serve answers empty pages). For a wallet, the check is the wallet's newest row in the
 * job's range: a row inside what was asked for is a block the chain has, with its number and time,
 * so no block is asked for on top. The wallet's oldest row in the range is asked in the same round
 * trip: two blocks give the search of window edges a block time, where one alone needs the block
 * before it, one round trip more before the first page. The chains are checked at once, not one
 * after the other: a job of many chains on a distant service waits one round trip, not one per chain.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { exportJob, startRecordingProxy, truthWalletTransactions } from '../helpers/export.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('chains-checked-');
const CHAINS = [1, 8453, 42161];
const CHECK_DELAY_MS = 300;
const DAY = 86_400;
const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000', '');

it(
  'checks every chain in one round trip, from the wallet’s newest and oldest rows, and exports exactly',
  { timeout: 120_000 },
  async () => {
    const alice = sandbox.data.wallets[0]!.address;
    const from = Math.max(...CHAINS.map((c) => Math.ceil(sandbox.data.chain(c)!.firstTimestamp / DAY) * DAY));
    const to = from + 2 * DAY;
    // The checks (a newest or oldest row: limit=1) are slow; everything else answers at once.
    const isCheck = (u: URL) => u.pathname.endsWith('/transactions') && u.searchParams.get('limit') === '1';
    const proxy = await startRecordingProxy(sandbox.url, { delayMs: (u) => (isCheck(u) ? CHECK_DELAY_MS : 0) });
    try {
      const report = await exportJob({
        dir: tmp.dir,
        sandbox: { url: proxy.url, explorerUrl: sandbox.explorerUrl },
        destination: join(tmp.dir, 'out'),
        job: {
          name: 'chains-checked',
          source: { base_url: 'sandbox', chains: CHAINS },
          targets: [{ wallet: alice, datasets: ['transactions'] }],
          range: { from: iso(from), to: iso(to), chunk: '1d' },
          output: { format: 'ndjson' },
        },
      });
      expect(report.status, JSON.stringify(report.failed)).toBe('succeeded');
      const rows = CHAINS.flatMap((c) => truthWalletTransactions(sandbox.data, alice, [c], { by: 'time', from, to }));
      expect(report.rows).toBe(rows.length);

      const checks = proxy.requests.flatMap((u, i) =>
        isCheck(u)
          ? [{ chain: Number(u.searchParams.get('chain_id')), order: u.searchParams.get('sort_order'), at: proxy.arrivals[i]! }]
          : [],
      );
      expect(checks.map((c) => `${c.chain} ${c.order}`).sort()).toEqual(CHAINS.flatMap((c) => [`${c} asc`, `${c} desc`]).sort());
      // All sent before the first one was answered.
      const at = checks.map((c) => c.at);
      expect(Math.max(...at) - Math.min(...at)).toBeLessThan(CHECK_DELAY_MS / 2);
      // Nothing else before the checks: the newest row's block is not asked for again, nor the block before it (for a block time).
      const firstCheck = proxy.requests.findIndex(isCheck);
      expect(proxy.requests.slice(0, firstCheck).map((u) => u.pathname)).toEqual([]);
      for (const c of CHAINS) {
        const row = rows.filter((r) => r.chain_id === c).at(-1)!;
        const asked = proxy.requests.filter(
          (u) =>
            (u.pathname.endsWith(`/resolve/${row.block_number}`) || u.pathname.endsWith(`/resolve/${row.block_number - 1}`)) &&
            u.searchParams.get('chain_id') === String(c),
        );
        expect(asked, `chain ${c}: block ${row.block_number}`).toEqual([]);
      }
    } finally {
      await proxy.close();
    }
  },
);
