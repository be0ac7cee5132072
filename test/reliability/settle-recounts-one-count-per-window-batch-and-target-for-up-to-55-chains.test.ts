/**
 * The cost of settling, on the wire: the run after an export asks one `aggregate=count()` request
 * (page 0, `group_by=chain_id`) per window batch and target for up to 55 chains, the request of
 * `verify --recount`. Two wallets on 60 chains over two days in 12-hour windows (a batch is a
 * day: 4 windows, 2 batches per unit): per day and wallet 2 requests (55 chains and 5), and the
 * wallet route's first, ungrouped, for one chain: 1 + 2 x 2 x 2 = 9 requests for 480 windows.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { startRecordingProxy } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({ transactions: 2_000, extraChains: 57 });
const tmp = useTempDir('settle-cost-');

describe('settling 60 chains', () => {
  it('asks one count per window batch and target for up to 55 chains', { timeout: 180_000 }, async () => {
    const chains = sandbox.data.chains.map((c) => c.chainId);
    expect(chains.length).toBe(60);
    const wallets = sandbox.data.wallets.slice(0, 2).map((w) => w.address);
    const out = join(tmp.dir, 'out');
    const jobFile = await writeJob(tmp.dir, {
      name: 'settle-cost',
      source: { base_url: sandbox.url, chains },
      targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '12h' },
      output: { format: 'ndjson', destination: out },
    });
    const first = await runCli(['run', jobFile, '--log-level', 'error']);
    expect(first.code, first.stderr).toBe(0);

    const proxy = await startRecordingProxy(sandbox.url);
    try {
      const r = await runCli(['run', jobFile, '--json', '--log-level', 'error', '--base-url', proxy.url]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as RunReport;
      const counts = proxy.requests.filter((u) => u.searchParams.has('aggregate'));
      // 2 wallets x 60 chains x 4 windows, recorded as two batches (a day each) per unit.
      expect(report.settle!.recounted).toBe(480);
      expect(report.settle!.settled).toBe(480);
      expect(report.settle!.requests).toBe(counts.length);
      expect(counts.length).toBe(1 + 2 * 2 * 2);
      for (const u of counts) {
        expect(u.searchParams.getAll('aggregate')).toEqual(['count() AS insight_export_rows']);
        expect(u.searchParams.get('page')).toBe('0');
        expect(u.searchParams.getAll('chain_id').length).toBeLessThanOrEqual(55);
      }
      const grouped = counts.filter((u) => u.searchParams.get('group_by') === 'chain_id');
      expect(grouped).toHaveLength(8);
      // Every chain of every batch and wallet named once.
      const named = grouped.flatMap((u) =>
        u.searchParams.getAll('chain_id').map((c) => `${u.pathname}|${u.searchParams.get('filter_block_timestamp_gte')}|${c}`),
      );
      expect(new Set(named).size).toBe(named.length);
      expect(named.length).toBe(240 - 1);
    } finally {
      await proxy.close();
    }
  });
});
