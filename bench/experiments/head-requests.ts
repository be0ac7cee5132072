/**
 * What proving a job's range served costs per chain: block requests (`resolve/<n>`) and all
 * requests of a run over a past time range on many chains, on a first run (no head known) and on
 * a run after it with `to` moved a day on (the heads the first run found are known). Not a test:
 * prints one JSON line.
 *
 *   node --import tsx bench/experiments/head-requests.ts --chains 60
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/config/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { runJob } from '../../src/run/run-job.js';
import { startSandbox } from '@insight-export/sandbox';

const argv = process.argv.slice(2);
const get = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const chainCount = Number(get('chains') ?? 60);

const sandbox = await startSandbox({ seed: 42, transactions: 20 * chainCount, extraChains: Math.max(0, chainCount - 3) });
const work = mkdtempSync(join(tmpdir(), 'insight-head-requests-'));
try {
  const chains = sandbox.data.chains.map((c) => c.chainId).slice(0, chainCount);
  const wallet = sandbox.data.wallets[0]!.address;
  const run = async (to: string) => {
    const jobFile = join(work, 'job.yaml');
    writeFileSync(
      jobFile,
      [
        'name: heads',
        'source:',
        '  base_url: sandbox',
        `  chains: [${chains.join(', ')}]`,
        'targets:',
        `  - wallet: "${wallet}"`,
        '    datasets: [transactions]',
        'range:',
        '  from: "2024-02-01"',
        `  to: "${to}"`,
        '  chunk: 1d',
        '',
      ].join('\n'),
    );
    const job = await loadJob(jobFile);
    const config = resolveConfig({
      job,
      env: {},
      configFile: null,
      cliFlags: { baseUrl: sandbox.url, destination: join(work, 'out'), stagingDir: join(work, 'staging'), format: 'ndjson' },
      require: ['source', 'destination'],
    });
    sandbox.resetStats();
    const report = await runJob({ job, config, logger: silentLogger });
    const stats = sandbox.stats();
    const blocks = stats.byRoute.resolve ?? 0;
    return {
      status: report.status,
      windows: report.windows.done,
      requests: stats.requests,
      block_requests: blocks,
      block_requests_per_chain: Math.round((blocks / chains.length) * 100) / 100,
      requests_per_chain: Math.round((stats.requests / chains.length) * 100) / 100,
    };
  };
  const first = await run('2024-02-02');
  const next = await run('2024-02-03');
  process.stdout.write(`${JSON.stringify({ chains: chains.length, first_run: first, next_run_to_moved_on: next })}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
  await sandbox.close();
}
