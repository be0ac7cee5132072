/**
 * The service takes at most 55 chain ids per request. A job over more chains is sent in batches
 * of at most 55 chains per request, each chain still paged exactly and committed on its own: the
 * files hold exactly the sandbox's rows of every chain, and no request named more than 55 chains.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { exportJob, expectedTransactionRow, readTable, startRecordingProxy, truthWalletTransactions } from '../helpers/export.js';

const sandbox = useSandbox({ transactions: 2_000, extraChains: 57 });
const tmp = useTempDir('many-chains-');

describe('a job with more than 55 chains', () => {
  it('exports every chain exactly, in requests of at most 55 chains', { timeout: 180_000 }, async () => {
    const chains = sandbox.data.chains.map((c) => c.chainId);
    expect(chains.length).toBe(60);
    const alice = sandbox.data.wallets[0]!.address;
    // 2024-02-01: every chain of the sandbox has blocks on that day.
    const from = 1_706_745_600;
    const to = from + 86_400;
    const proxy = await startRecordingProxy(sandbox.url);
    try {
      const dest = join(tmp.dir, 'out');
      const report = await exportJob({
        dir: tmp.dir,
        sandbox: { url: proxy.url, explorerUrl: sandbox.explorerUrl },
        destination: dest,
        job: {
          name: 'many-chains',
          source: { base_url: 'sandbox', chains },
          targets: [{ wallet: alice, datasets: ['transactions'] }],
          range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
          output: { format: 'ndjson' },
        },
      });
      expect(report.status, JSON.stringify(report.failed)).toBe('succeeded');
      const perRequest = proxy.requests
        .filter((u) => u.pathname.endsWith('/transactions'))
        .map((u) => u.searchParams.getAll('chain_id').length);
      expect(perRequest.length).toBeGreaterThan(1);
      expect(Math.max(...perRequest)).toBeLessThanOrEqual(55);
      expect(
        new Set(proxy.requests.flatMap((u) => (u.pathname.endsWith('/transactions') ? u.searchParams.getAll('chain_id') : []))).size,
      ).toBe(60);

      const truth = chains.flatMap((c) => truthWalletTransactions(sandbox.data, alice, [c], { by: 'time', from, to }));
      expect(new Set(truth.map((t) => t.chain_id)).size).toBe(60);
      const rows = await readTable(dest, 'transactions', 'ndjson');
      const got = new Map(rows.map((r) => [String(r.item_id), r]));
      expect(got.size).toBe(rows.length);
      expect(rows.length).toBe(truth.length);
      for (const t of truth) {
        const want = expectedTransactionRow(t, alice);
        expect(got.get(String(want.item_id))).toMatchObject(want);
      }
    } finally {
      await proxy.close();
    }
  });
});
