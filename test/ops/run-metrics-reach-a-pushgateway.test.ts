/**
 * `run --pushgateway URL` pushes the run's metrics to a real Prometheus Pushgateway (Debian's
 * prometheus-pushgateway, which rejects malformed exposition text), grouped by job and shard;
 * the figures equal the run report's, which equal the source's rows per dataset and chain; a
 * failed run keeps the last success time; an unreachable gateway does not fail the export and
 * the URL's password never reaches the logs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RunReport } from '../../src/run/report.js';
import { freePort } from '../helpers/free-port.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { baseEnv, runCli } from './helpers.js';

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const CHAINS = [1, 8453, 42161];
const sandbox = useSandbox();
const tmp = useTempDir('ops-metrics-');
let gateway: ChildProcess | null = null;
let gatewayUrl: string;
let jobFile: string;

/** Samples of one metric family from the gateway's /metrics: labels -> value. */
async function scrape(name: string): Promise<{ labels: Record<string, string>; value: number }[]> {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

function value(samples: { labels: Record<string, string>; value: number }[], want: Record<string, string>): number | undefined {
  return samples.find((s) => Object.entries(want).every(([k, v]) => s.labels[k] === v))?.value;
}

beforeAll(async () => {
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  gateway = spawn('prometheus-pushgateway', [`--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });
  const spawned = await new Promise<Error | null>((resolve) => {
    gateway!.once('spawn', () => resolve(null));
    gateway!.once('error', (err) => resolve(err));
  });
  if (spawned)
    throw new Error(
      `prometheus-pushgateway could not start (${spawned.message}): apt-get install prometheus-pushgateway (scripts/install-test-deps.sh does)`,
    );
  for (let i = 0; ; i++) {
    const ok = await fetch(`${gatewayUrl}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 200) throw new Error('prometheus-pushgateway did not become ready');
    await sleep(50);
  }
  const wallet = sandbox.data.wallets[0]!.address;
  const token = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!;
  jobFile = join(tmp.dir, 'metrics.yaml');
  await writeFile(
    jobFile,
    stringify({
      name: 'metrics-job',
      source: { base_url: 'sandbox', chains: CHAINS },
      targets: [
        { wallet, datasets: ['transactions'] },
        { contract: token.address, chains: [1], events: [TRANSFER] },
      ],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      output: { format: 'ndjson' },
    }),
  );
}, 60_000);

afterAll(async () => {
  gateway?.kill('SIGTERM');
});

function run(args: string[]) {
  return runCli(['run', jobFile, '--json', '--base-url', sandbox.url, ...args], baseEnv({ INSIGHT_EXPORT_LOG_LEVEL: 'info' }));
}

describe('run metrics', () => {
  let report: RunReport;

  it('a run pushes its figures; they equal the report, whose per-chain and per-dataset rows equal the source', async () => {
    const res = await run(['--destination', join(tmp.dir, 'out'), '--pushgateway', gatewayUrl]);
    expect(res.code, res.stderr).toBe(0);
    report = JSON.parse(res.stdout) as RunReport;

    const wallet = sandbox.data.wallets[0]!.address;
    const token = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!;
    const range = `filter_block_timestamp_gte=${Date.parse('2024-02-01T00:00:00Z') / 1000}&filter_block_timestamp_lt=${Date.parse('2024-02-03T00:00:00Z') / 1000}`;
    const txByChain = new Map<number, number>();
    for (const t of sandbox.data.allWalletTransactions(
      wallet,
      sandbox.data.parseTransactionsQuery(`chain_id=${CHAINS.join(',')}&${range}`),
    )) {
      txByChain.set(t.chain_id, (txByChain.get(t.chain_id) ?? 0) + 1);
    }
    const events = sandbox.data.allContractEvents(token.address, TRANSFER, sandbox.data.parseEventsQuery(`chain_id=1&${range}`)).length;
    const txs = [...txByChain.values()].reduce((a, b) => a + b, 0);
    expect(report.by_dataset.transactions!.rows).toBe(txs);
    expect(report.by_dataset.events!.rows).toBe(events);
    for (const c of CHAINS) expect(report.by_chain[String(c)]!.rows, `chain ${c}`).toBe((txByChain.get(c) ?? 0) + (c === 1 ? events : 0));
    expect(report.by_dataset.transactions!.windows).toEqual({ planned: 6, done: 6, failed: 0, abandoned: 0 });
    expect(report.by_chain['1']!.windows.done).toBe(4);

    const group = { job: 'metrics-job' };
    expect(value(await scrape('insight_export_run_rows'), group)).toBe(report.rows);
    expect(value(await scrape('insight_export_run_files'), group)).toBe(report.files);
    expect(value(await scrape('insight_export_run_requests'), group)).toBe(report.requests);
    expect(value(await scrape('insight_export_run_status'), { ...group, status: 'succeeded' })).toBe(1);
    expect(value(await scrape('insight_export_run_status'), { ...group, status: 'failed' })).toBe(0);
    expect(value(await scrape('insight_export_run_windows'), { ...group, state: 'done' })).toBe(report.windows.done);
    for (const [dataset, f] of Object.entries(report.by_dataset)) {
      expect(value(await scrape('insight_export_dataset_rows'), { ...group, dataset })).toBe(f.rows);
    }
    for (const [chain, f] of Object.entries(report.by_chain)) {
      expect(value(await scrape('insight_export_chain_rows'), { ...group, chain_id: chain })).toBe(f.rows);
      expect(value(await scrape('insight_export_chain_bytes'), { ...group, chain_id: chain })).toBe(f.bytes);
    }
    expect(value(await scrape('insight_export_last_success_timestamp_seconds'), group)).toBe(Date.parse(report.finished_at) / 1000);
    expect(value(await scrape('push_time_seconds'), group)).toBeGreaterThan(0);
  });

  it('a failed run reports failure and keeps the time of the last success', async () => {
    // The events route fails: the run gets past its chain checks (resolve, and the wallet's newest
    // row as a hint to the chain head) to its windows, whose events pages fail.
    sandbox.setFaults({ rates: { http500: 1 }, routes: ['events'] });
    try {
      const res = await run(['--destination', join(tmp.dir, 'out-failing'), '--pushgateway', gatewayUrl, '--max-attempts', '1']);
      expect(res.code).toBe(1);
      const failed = JSON.parse(res.stdout) as RunReport;
      expect(failed.status).toBe('failed');
      const group = { job: 'metrics-job' };
      expect(value(await scrape('insight_export_run_status'), { ...group, status: 'failed' })).toBe(1);
      expect(value(await scrape('insight_export_run_status'), { ...group, status: 'succeeded' })).toBe(0);
      expect(value(await scrape('insight_export_run_windows'), { ...group, state: 'failed' })).toBe(failed.windows.failed);
      expect(failed.windows.failed).toBeGreaterThan(0);
      expect(value(await scrape('insight_export_last_success_timestamp_seconds'), group)).toBe(Date.parse(report.finished_at) / 1000);
    } finally {
      sandbox.setFaults(null);
    }
  });

  it('shards push to their own groups', async () => {
    const out = join(tmp.dir, 'out-sharded');
    const reports: RunReport[] = [];
    for (const shard of ['0/2', '1/2']) {
      const res = await run(['--destination', out, '--pushgateway', gatewayUrl, '--shard', shard]);
      expect(res.code, res.stderr).toBe(0);
      reports.push(JSON.parse(res.stdout) as RunReport);
    }
    const rows = await scrape('insight_export_run_rows');
    expect(value(rows, { job: 'metrics-job', shard: '0-of-2' })).toBe(reports[0]!.rows);
    expect(value(rows, { job: 'metrics-job', shard: '1-of-2' })).toBe(reports[1]!.rows);
    expect(reports[0]!.rows + reports[1]!.rows).toBe(report.rows);
  });

  it('an unreachable gateway is logged, not fatal, and its password is never printed', async () => {
    const closed = await freePort();
    const res = await run([
      '--destination',
      join(tmp.dir, 'out-unreachable'),
      '--pushgateway',
      `http://metrics:s3cr3t-pw@127.0.0.1:${closed}`,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/run metrics not pushed/);
    expect(res.stderr).toContain(`127.0.0.1:${closed}`);
    expect(res.stderr + res.stdout).not.toContain('s3cr3t-pw');
  });

  it('a URL that is not http(s) is bad input (exit 2) before anything is exported', async () => {
    const res = await run(['--destination', join(tmp.dir, 'out-bad'), '--pushgateway', 'ftp://gateway']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/must be http or https/);
  });
});
