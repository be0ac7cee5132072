/**
 * Issue 31 item 7: the report's by_chain had windows and rows but no requests or retries. Each
 * chain's `requests` are the attempts whose chain_id parameters named it (a request for several
 * chains counts for each), `retries` the attempts among them that were retries: under 503s from
 * the service, they equal what a recording proxy saw and what the client retried.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { exportJob, startRecordingProxy } from '../helpers/export.js';

const sandbox = useSandbox({ transactions: 2_000, faults: { rates: { http503: 0.2 }, routes: ['transactions'], seed: 7 } });
const tmp = useTempDir('by-chain-requests-');

it('by_chain carries the requests and retries that named each chain', { timeout: 120_000 }, async () => {
  const chains = [1, 8453];
  const proxy = await startRecordingProxy(sandbox.url);
  try {
    const report = await exportJob({
      dir: tmp.dir,
      sandbox: { url: proxy.url, explorerUrl: sandbox.explorerUrl },
      destination: join(tmp.dir, 'out'),
      job: {
        name: 'by-chain',
        source: { base_url: 'sandbox', chains },
        targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
        range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
        output: { format: 'ndjson' },
      },
    });
    expect(report.status, JSON.stringify(report.failed)).toBe('succeeded');
    expect(report.retries).toBeGreaterThan(0);
    for (const chain of chains) {
      const named = proxy.requests.filter((u) => u.searchParams.getAll('chain_id').includes(String(chain))).length;
      const figures = report.by_chain[String(chain)]!;
      expect(figures.requests).toBe(named);
      expect(figures.retries).toBeGreaterThan(0);
      expect(figures.retries).toBeLessThan(figures.requests);
    }
    // Every request of this job names a chain: each retry counts for at least one chain, at most for both.
    const chainRetries = chains.map((c) => report.by_chain[String(c)]!.retries);
    expect(Math.max(...chainRetries)).toBeLessThanOrEqual(report.retries);
    expect(chainRetries[0]! + chainRetries[1]!).toBeGreaterThanOrEqual(report.retries);
  } finally {
    await proxy.close();
  }
});
