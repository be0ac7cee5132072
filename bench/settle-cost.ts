/**
 * What settling costs (issue 42): the requests of a job's first run and of the runs after it
 * against the same service, per 1,000 rows. Each later run recounts the windows the runs before
 * committed and has not settled yet (one count per window batch and target for up to 55 chains);
 * before settling existed a later run of a finished fixed range sent almost nothing.
 *
 *   node --import tsx bench/settle-cost.ts                          # the sparse job: 200 wallets, 3 chains, 7 days
 *   node --import tsx bench/settle-cost.ts --wallets 200 --days 7 --transactions 200000 --runs 3
 *
 * The sparse job: the `--wallets` ordinary wallets of a sandbox (seed 42) with the fewest rows
 * that still have one on each of chains 1, 8453 and 42161 in the range, every one a target of
 * the `transactions` dataset, 1-day windows, NDJSON. Prints one JSON line, then a Markdown row.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveConfig } from '../src/config/index.js';
import { loadJob } from '../src/job/index.js';
import { silentLogger } from '../src/log.js';
import { runJob } from '../src/run/run-job.js';
import { startSandbox } from '@insight-export/sandbox';

const CHAINS = [1, 8453, 42161];
const FROM = '2024-02-01';
const DAY = 86_400;

export interface SettleCost {
  job: string;
  wallets: number;
  days: number;
  rows: number;
  runs: { requests: number; rows: number; windows_done: number; seconds: number }[];
  /** Requests of the first run, and of the first n runs, per 1,000 rows of the export. */
  first_run_per_1000_rows: number;
  all_runs_per_1000_rows: number;
}

export async function measureSparseJob(opts: { wallets: number; days: number; transactions: number; runs: number }): Promise<SettleCost> {
  const sandbox = await startSandbox({ seed: 42, transactions: opts.transactions });
  const work = mkdtempSync(join(tmpdir(), 'insight-settle-cost-'));
  try {
    const data = sandbox.data;
    const from = Date.parse(FROM) / 1000;
    const to = from + opts.days * DAY;
    const rowsIn = (wallet: string, chain: number) =>
      data.allWalletTransactions(
        wallet,
        data.parseTransactionsQuery(`chain_id=${chain}&filter_block_timestamp_gte=${from}&filter_block_timestamp_lt=${to}`),
      ).length;
    // Ordinary wallets (not the three hot ones), fewest rows first, with a row on every chain.
    const candidates = data.wallets
      .slice(3)
      .filter((w) => CHAINS.every((c) => (w.transactionsByChain[c] ?? 0) > 0))
      .sort((a, b) => a.transactionCount - b.transactionCount);
    const chosen: string[] = [];
    for (const w of candidates) {
      if (chosen.length === opts.wallets) break;
      if (CHAINS.every((c) => rowsIn(w.address, c) > 0)) chosen.push(w.address);
    }
    const spec = {
      name: 'sparse',
      source: { base_url: 'sandbox', chains: CHAINS },
      targets: chosen.map((wallet) => ({ wallet, datasets: ['transactions'] })),
      range: { from: FROM, to: new Date(to * 1000).toISOString().slice(0, 10), chunk: '1d' },
      decode: false,
    };
    const jobFile = join(work, 'job.yaml');
    writeFileSync(jobFile, JSON.stringify(spec));
    const job = await loadJob(jobFile);
    const config = resolveConfig({
      job,
      env: {},
      configFile: null,
      cliFlags: { baseUrl: sandbox.url, destination: join(work, 'out'), stagingDir: join(work, 'staging'), format: 'ndjson' },
      require: ['source', 'destination'],
    });
    const runs: SettleCost['runs'] = [];
    for (let i = 0; i < opts.runs; i++) {
      const t0 = performance.now();
      const r = await runJob({ job, config, logger: silentLogger });
      if (r.status !== 'succeeded') throw new Error(`run ${i + 1} ${r.status}: ${r.error ?? JSON.stringify(r.failed.slice(0, 2))}`);
      runs.push({
        requests: r.requests,
        rows: r.rows,
        windows_done: r.windows.done,
        seconds: Math.round((performance.now() - t0) / 100) / 10,
      });
    }
    const rows = runs[0]!.rows;
    const per1000 = (n: number) => Math.round((n / rows) * 1000 * 100) / 100;
    return {
      job: `${chosen.length} wallets x ${CHAINS.length} chains x ${opts.days} days`,
      wallets: chosen.length,
      days: opts.days,
      rows,
      runs,
      first_run_per_1000_rows: per1000(runs[0]!.requests),
      all_runs_per_1000_rows: per1000(runs.reduce((n, r) => n + r.requests, 0)),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
    await sandbox.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const r = await measureSparseJob({
    wallets: Number(get('wallets') ?? 200),
    days: Number(get('days') ?? 7),
    transactions: Number(get('transactions') ?? 200_000),
    runs: Number(get('runs') ?? 3),
  });
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.stdout.write(
    `| ${r.job} | ${r.rows} | ${r.runs.map((x) => x.requests).join(' / ')} | ${r.first_run_per_1000_rows} | ${r.all_runs_per_1000_rows} |\n`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
