/**
 * Issue 31.3: a wallet written as a name (alice.eth) on more than 55 chains failed before its first
 * window ("expected 1 to 55 chain ids, got 60"): the name was resolved in one request naming every
 * chain. It is resolved in batches of at most 55 chains, and the job exports exactly the sandbox's
 * rows of the name's address on every chain.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { exportJob, expectedTransactionRow, readTable, startRecordingProxy, truthWalletTransactions } from '../helpers/export.js';

const sandbox = useSandbox({ transactions: 2_000, extraChains: 57 });
const tmp = useTempDir('many-chains-name-');

describe('a wallet name on more than 55 chains', () => {
  it('resolves in requests of at most 55 chains and exports every chain exactly', { timeout: 180_000 }, async () => {
    const chains = sandbox.data.chains.map((c) => c.chainId);
    expect(chains.length).toBe(60);
    const named = sandbox.data.wallets.find((w) => w.name !== null)!;
    const from = 1_706_745_600; // 2024-02-01: every chain of the sandbox has blocks on that day.
    const to = from + 86_400;
    const proxy = await startRecordingProxy(sandbox.url);
    try {
      const dest = join(tmp.dir, 'out');
      const report = await exportJob({
        dir: tmp.dir,
        sandbox: { url: proxy.url, explorerUrl: sandbox.explorerUrl },
        destination: dest,
        job: {
          name: 'many-chains-name',
          source: { base_url: 'sandbox', chains },
          targets: [{ wallet: named.name, datasets: ['transactions'] }],
          range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
          output: { format: 'ndjson' },
        },
      });
      expect(report.status, JSON.stringify(report.failed)).toBe('succeeded');
      const resolves = proxy.requests.filter((u) => u.pathname.includes('/resolve/'));
      expect(resolves.length).toBeGreaterThan(1);
      expect(Math.max(...resolves.map((u) => u.searchParams.getAll('chain_id').length))).toBeLessThanOrEqual(55);
      expect(new Set(resolves.flatMap((u) => u.searchParams.getAll('chain_id'))).size).toBe(60);

      const truth = chains.flatMap((c) => truthWalletTransactions(sandbox.data, named.address, [c], { by: 'time', from, to }));
      expect(new Set(truth.map((t) => t.chain_id)).size).toBe(60);
      const rows = await readTable(dest, 'transactions', 'ndjson');
      const got = new Map(rows.map((r) => [String(r.item_id), r]));
      expect(got.size).toBe(rows.length);
      expect(rows.length).toBe(truth.length);
      for (const t of truth)
        expect(got.get(String(expectedTransactionRow(t, named.address).item_id))).toMatchObject(expectedTransactionRow(t, named.address));
    } finally {
      await proxy.close();
    }
  });
});
