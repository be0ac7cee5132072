/**
 * The cost of `verify --recount`: one `aggregate=count()` request (page 0) per window and target,
 * the chains that share the window in one request of at most 55 (`group_by=chain_id`); a route
 * that may count in halves (the wallet route) is first asked ungrouped for one chain, whose answer
 * says how the service counts. 60 chains over two days: 120 windows in 5 requests, printed as
 * requests per 1,000 windows.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { VerifyReport } from '../../src/state/verify.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob, startRecordingProxy } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({ transactions: 2_000, extraChains: 57 });
const tmp = useTempDir('recount-cost-');

describe('verify --recount over 60 chains', () => {
  it('asks one count per window for up to 55 chains, page 0 only', { timeout: 180_000 }, async () => {
    const chains = sandbox.data.chains.map((c) => c.chainId);
    expect(chains.length).toBe(60);
    const alice = sandbox.data.wallets[0]!.address;
    const out = join(tmp.dir, 'out');
    const spec = {
      name: 'recount-cost',
      source: { base_url: sandbox.url, chains },
      targets: [{ wallet: alice, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      output: { format: 'ndjson', destination: out },
    };
    const jobFile = await writeJob(tmp.dir, spec);
    expect((await exportJob({ job: spec, dir: tmp.dir, jobFileName: 'run.yaml', destination: out })).status).toBe('succeeded');

    const proxy = await startRecordingProxy(sandbox.url);
    try {
      const res = await runCli(['verify', jobFile, '--recount', '--json', '--base-url', proxy.url, '--log-level', 'error']);
      expect(res.code, res.stdout).toBe(0);
      const report = JSON.parse(res.stdout) as VerifyReport;
      const counts = proxy.requests.filter((u) => u.searchParams.has('aggregate'));
      expect(report.recount!.windows_checked).toBe(120);
      expect(report.recount!.windows_ok).toBe(120);
      expect(report.recount!.requests).toBe(counts.length);
      // The probe (one chain, ungrouped), then per day ceil(chains left / 55) grouped requests: 1 + 2 + 2.
      expect(counts.length).toBe(5);
      for (const u of counts) {
        expect(u.searchParams.getAll('aggregate')).toEqual(['count() AS insight_export_rows']);
        expect(u.searchParams.get('page')).toBe('0');
        expect(u.searchParams.getAll('chain_id').length).toBeLessThanOrEqual(55);
      }
      expect(counts.filter((u) => u.searchParams.get('group_by') === 'chain_id')).toHaveLength(4);
      expect(report.recount!.requests_per_1000_windows).toBe(Math.round((5 * 1000) / 120));
      console.log(
        `[recount] 60 chains x 2 windows: ${counts.length} requests for ${report.recount!.windows_checked} windows (${report.recount!.requests_per_1000_windows} per 1,000 windows)`,
      );
    } finally {
      await proxy.close();
    }
  });
});
