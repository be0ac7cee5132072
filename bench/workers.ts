/**
 * The workers part of `npm run bench` (issue 33 goal 4, issue 35): the bundled CLI runs the bench
 * job (one wallet, three chains, 6-hour windows, the page server's seeded sandbox) with
 * `run --workers N` for each N, into a fresh destination each time, repetitions interleaved.
 * Wall time is the CLI process's, from the outside; CPU is the user + system time of the CLI and
 * its workers (the children this process waited for: /proc/self/stat cutime + cstime); rows and
 * requests come from the merged run report.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { RunReport } from '../src/run/report.js';
import { sandboxInBundle } from '../test/helpers/sandbox-in-bundle.js';

export interface WorkersBenchInput {
  repo: string;
  /** The read interface (the page server's URL), its hot wallet and the end of its data. */
  baseUrl: string;
  wallet: string;
  chains: number[];
  from: string;
  to: string;
  counts: number[];
  repeats: number;
  env: NodeJS.ProcessEnv;
  emit: (markdown: string) => void;
  /** Records a goal's verdict for the bench's list of goals. */
  goal: (text: string, measured: string, met: boolean) => string;
}

interface Measured {
  workers: number;
  rows: number;
  seconds: number;
  cpuSec: number;
  requests: number;
  rowsPerWorker: number[];
}

/** CPU seconds of the children this process has waited for (Linux). */
function childrenCpuSec(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function runCliOnce(cli: string, jobFile: string, workers: number, env: NodeJS.ProcessEnv): Promise<Measured> {
  const cpu0 = childrenCpuSec();
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'run', jobFile, '--workers', String(workers), '--json', '--log-level', 'error'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0) return reject(new Error(`run --workers ${workers} exited ${code}: ${stderr.slice(-2000)}`));
      const report = JSON.parse(stdout) as RunReport;
      resolve({
        workers,
        rows: report.rows,
        seconds,
        cpuSec: childrenCpuSec() - cpu0,
        requests: report.requests,
        rowsPerWorker: (report.workers ?? [{ rows: report.rows }]).map((w) => w.rows),
      });
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export async function workersBench(b: WorkersBenchInput): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'insight-bench-workers-'));
  try {
    // Inside node_modules, so the bundle's packages (left external) resolve as the product's do.
    const cliDir = join(b.repo, 'node_modules', `.insight-export-bench-workers-${process.pid}`);
    const cli = join(cliDir, 'cli.js');
    await build({
      entryPoints: [join(b.repo, 'src/cli.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      plugins: [sandboxInBundle(b.repo)],
      outfile: cli,
      logLevel: 'warning',
    });
    let n = 0;
    const jobFile = (): string => {
      const dir = join(work, `run-${++n}`);
      const file = join(work, `job-${n}.yaml`);
      const text = [
        'name: bench-workers',
        'source:',
        `  base_url: ${b.baseUrl}`,
        `  chains: [${b.chains.join(', ')}]`,
        'targets:',
        `  - wallet: "${b.wallet}"`,
        '    datasets: [transactions]',
        'range:',
        `  from: "${b.from}"`,
        `  to: "${b.to}"`,
        '  chunk: 6h',
        'output:',
        `  destination: ${dir}/out`,
        '',
      ].join('\n');
      writeFileSync(file, text);
      return file;
    };
    // Warm-up: the page server renders every page once.
    await runCliOnce(cli, jobFile(), 1, b.env);
    const runs = new Map<number, Measured[]>();
    for (let r = 0; r < b.repeats; r++) {
      for (const count of b.counts) {
        const m = await runCliOnce(cli, jobFile(), count, b.env);
        runs.set(count, [...(runs.get(count) ?? []), m]);
        rmSync(join(work, `run-${n}`), { recursive: true, force: true });
      }
    }
    // rows/s of a count: its rows over its median wall time.
    const rowsPerSec = (ms: Measured[]) => ms[0]!.rows / median(ms.map((m) => m.seconds));
    const one = rowsPerSec(runs.get(b.counts[0]!)!);
    const rows = [
      '| workers | rows | wall s | rows/s | × the first | CPU s | CPU µs per row | requests per 1,000 rows | rows per worker |',
      '|---|---|---|---|---|---|---|---|---|',
    ];
    const cpuPerRow = (ms: Measured[]) => median(ms.map((m) => (m.cpuSec / m.rows) * 1e6));
    const oneCpu = cpuPerRow(runs.get(b.counts[0]!)!);
    for (const count of b.counts) {
      const ms = runs.get(count)!;
      const rps = rowsPerSec(ms);
      const mid = ms[0]!;
      if (count > b.counts[0]!) {
        // Issue 33 goal 4: rows/s grows with the processes (up to the limit), CPU per row does not.
        b.goal(
          `issue 33 goal 4: rows/s with ${count} workers above ${b.counts[0]}'s (${cpus().length} cores)`,
          `${(rps / one).toFixed(2)}x`,
          rps > one * 1.05,
        );
        b.goal(
          `issue 33 goal 4: CPU per row with ${count} workers no more than ${b.counts[0]}'s`,
          `${cpuPerRow(ms).toFixed(1)} against ${oneCpu.toFixed(1)} µs`,
          cpuPerRow(ms) <= oneCpu * 1.05,
        );
      }
      rows.push(
        `| ${count} | ${fmt(mid.rows)} | ${median(ms.map((m) => m.seconds)).toFixed(1)} (${ms.map((m) => m.seconds.toFixed(1)).join(', ')}) | ${fmt(rps)} | ${(rps / one).toFixed(2)} | ` +
          `${median(ms.map((m) => m.cpuSec)).toFixed(1)} | ${median(ms.map((m) => (m.cpuSec / m.rows) * 1e6)).toFixed(1)} | ` +
          `${median(ms.map((m) => (m.requests / m.rows) * 1000)).toFixed(2)} | ${mid.rowsPerWorker.map(fmt).join(' / ')} |`,
      );
    }
    b.emit(
      [
        '## 8. Workers: shard processes of one run (issue 33 goal 4, issue 35)',
        '',
        `\`run --workers N\` of the bundled CLI: wallet ${b.wallet} on chains ${b.chains.join(', ')}, ${b.from} to ${b.to}, 6-hour windows, Parquet (DuckDB), ` +
          `against the page server (its own process, pages rendered once by a warm-up run); a fresh destination per run; median of ${b.repeats} interleaved repetitions. ` +
          "Wall time from the outside (process start to exit, the workers' starts included); CPU: user + system of the CLI and all its workers; " +
          'requests from the merged report (each worker pages its own windows: chains of one window still share requests).',
        '',
        ...rows,
      ].join('\n'),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(join(b.repo, 'node_modules', `.insight-export-bench-workers-${process.pid}`), { recursive: true, force: true });
  }
}
