/**
 * End-to-end export throughput and peak memory: one wallet's ~1M transactions (alice.eth in a
 * sandbox of 3.1M transactions, three chains, one window per day and chain) exported by a real run
 * (plan -> paginate -> decode -> write -> commit -> state) to a local directory, as Parquet with
 * each engine and as NDJSON.gz. Not a test:
 *
 *   npx tsx bench/export-throughput.ts [sandbox transactions, default 3100000]
 *
 * The sandbox runs in its own process (`insight-export sandbox`), so its memory and CPU are not
 * the exporter's; each configuration runs in a fresh child process, whose kernel peak RSS
 * (getrusage maxrss: JS heap, native DuckDB memory, buffers) is reported. rows/s = exported rows /
 * wall time of runJob (sandbox serving time included: on 2 cores the sandbox and the exporter
 * share the machine). CPU s = CPU time of every thread of the exporter process.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../src/config/index.js';
import { loadJob } from '../src/job/index.js';
import { createLogger } from '../src/log.js';
import { runJob } from '../src/run/run-job.js';
import { closeDuckDB } from '../src/sink/index.js';

const REPO = resolve(fileURLToPath(import.meta.url), '../..');

interface Config {
  label: string;
  format: 'parquet' | 'ndjson';
  engine?: 'duckdb' | 'hyparquet';
}

const CONFIGS: Config[] = [
  { label: 'Parquet, DuckDB engine (default), zstd', format: 'parquet', engine: 'duckdb' },
  { label: 'Parquet, hyparquet engine, zstd', format: 'parquet', engine: 'hyparquet' },
  { label: 'NDJSON.gz (gzip level 6)', format: 'ndjson' },
];

interface Target {
  url: string;
  wallet: string;
  /** Exclusive end of the range: the UTC day after the wallet's newest row. */
  to: string;
}

function dirBytes(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || e.parentPath.includes('_state') || e.parentPath.includes('.insight-export-tmp')) continue;
    files++;
    bytes += statSync(join(e.parentPath, e.name)).size;
  }
  return { files, bytes };
}

async function runOne(index: number, target: Target): Promise<void> {
  const config = CONFIGS[index]!;
  const work = mkdtempSync(join(tmpdir(), 'export-bench-'));
  try {
    const jobFile = join(work, 'job.yaml');
    writeFileSync(
      jobFile,
      [
        'name: export-bench',
        'source:',
        '  base_url: sandbox',
        '  chains: [1, 8453, 42161]',
        'targets:',
        `  - wallet: "${target.wallet}"`,
        '    datasets: [transactions]',
        'range:',
        '  from: "2024-02-01"',
        `  to: "${target.to}"`,
        '  chunk: 1d',
        '',
      ].join('\n'),
    );
    const job = await loadJob(jobFile);
    const cfg = resolveConfig({
      job,
      env: {},
      configFile: null,
      cliFlags: {
        baseUrl: target.url,
        destination: join(work, 'out'),
        format: config.format,
        ...(config.engine ? { parquetEngine: config.engine } : {}),
      },
      require: ['source', 'destination'],
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const report = await runJob({ job, config: cfg, logger: createLogger({ level: 'warn' }) });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    await closeDuckDB();
    if (report.status !== 'succeeded') throw new Error(`run ${report.status}: ${JSON.stringify(report.failed.slice(0, 3))}`);
    const out = dirBytes(join(work, 'out'));
    process.stdout.write(
      `${JSON.stringify({
        label: config.label,
        rows: report.rows,
        windows: report.windows.done,
        requests: report.requests,
        seconds: +seconds.toFixed(1),
        rowsPerSec: Math.round(report.rows / seconds),
        cpuSec: +((cpu.user + cpu.system) / 1e6).toFixed(1),
        peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
        files: out.files,
        outputMB: +(out.bytes / 1e6).toFixed(1),
      })}\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Starts `insight-export sandbox` in its own process; resolves with its URL and hot wallet. */
function startSandboxProcess(transactions: number): Promise<{ url: string; wallet: string; stop: () => void; buildSeconds: number }> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'src/cli.ts'), 'sandbox', '--transactions', String(transactions), '--port', '0'],
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolvePromise, reject) => {
    let text = '';
    child.on('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const url = /^url=(\S+)$/m.exec(text)?.[1];
      const wallet = /hot wallet (0x[0-9a-f]{40})/.exec(text)?.[1];
      if (url && wallet) {
        child.removeAllListeners('exit');
        resolvePromise({ url, wallet, buildSeconds: (performance.now() - started) / 1000, stop: () => child.kill('SIGTERM') });
      }
    });
  });
}

/** The UTC day after the wallet's newest transaction on any chain. */
async function rangeEnd(url: string, wallet: string): Promise<string> {
  let newest = 0;
  for (const chain of [1, 8453, 42161]) {
    const res = await fetch(`${url}/wallets/${wallet}/transactions?chain_id=${chain}&sort_by=block_number&sort_order=desc&limit=1`);
    const body = (await res.json()) as { data: { block_timestamp: number | string }[] };
    newest = Math.max(newest, Number(body.data[0]?.block_timestamp ?? 0));
  }
  return new Date((Math.floor(newest / 86_400) + 1) * 86_400_000).toISOString().slice(0, 10);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--one') {
    await runOne(Number(args[1]), JSON.parse(args[2]!) as Target);
    return;
  }
  const transactions = Number(args[0] ?? 3_100_000);
  const self = fileURLToPath(import.meta.url);
  const sandbox = await startSandboxProcess(transactions);
  try {
    const target: Target = { url: sandbox.url, wallet: sandbox.wallet, to: await rangeEnd(sandbox.url, sandbox.wallet) };
    console.log(
      `export throughput: wallet ${target.wallet} on chains 1, 8453, 42161 from 2024-02-01 to ${target.to} (1d windows), ` +
        `sandbox of ${transactions} transactions in its own process (built in ${sandbox.buildSeconds.toFixed(1)} s); node ${process.version}`,
    );
    console.log('| output | rows | windows | requests | seconds | rows/s | CPU s | peak RSS MB | files | output MB |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (let i = 0; i < CONFIGS.length; i++) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--one', String(i), JSON.stringify(target)], {
        cwd: REPO,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const r = JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
      console.log(
        `| ${r.label} | ${r.rows} | ${r.windows} | ${r.requests} | ${r.seconds} | ${r.rowsPerSec} | ${r.cpuSec} | ${r.peakRssMB} | ${r.files} | ${r.outputMB} |`,
      );
    }
  } finally {
    sandbox.stop();
  }
}

await main();
