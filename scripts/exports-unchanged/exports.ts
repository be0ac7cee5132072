/**
 * The exports whose rows must stay unchanged, and how each is made: every job file of jobs/ (each
 * in its own format, into a local folder; s3-export.yaml to its own bucket on radosgw) against the
 * sandbox, and the demo job in every format (NDJSON, Parquet by DuckDB and by hyparquet, Iceberg)
 * as one run, as four `--shard i/4` runs at once and as one `--workers 2` run. Every run is a child
 * `insight-export run` (bin/cli.js: the current sources, or their build when newer), so the exports
 * go through the product's own interface and nothing here depends on its internals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ReadFormat } from './rows.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = `${root}bin/cli.js`;

export interface ExportSpec {
  /** Key in the digests file. */
  name: string;
  /** Job file, relative to the repository. */
  job: string;
  /** Extra `run` flags of every run of this export. */
  flags: string[];
  /** How the export is split: one run, four `--shard i/4` runs at once, or `--workers 2`. */
  split: 'one' | 'shards' | 'workers';
  /** Who reads it back. */
  read: ReadFormat;
  /** The job reads from a served sandbox (its base_url is http://127.0.0.1:8787), not `base_url: sandbox`. */
  served: boolean;
  /** The rows hold the day of the run (a snapshot dataset): it is replaced by a placeholder in the digest. */
  runDay?: boolean;
  /** The job's own destination on S3 (radosgw), instead of a local folder. */
  s3?: S3Destination;
}

export interface S3Destination {
  bucket: string;
  prefix: string;
}

/**
 * jobs/ without demo.yaml (it is the demo exports below). s3-export.yaml writes to its own
 * destination on a throwaway radosgw (./radosgw.ts), read back from a download.
 */
const JOB_FILES: { job: string; read: ReadFormat; runDay?: boolean; s3?: S3Destination }[] = [
  { job: 'jobs/aggregates.yaml', read: 'ndjson' },
  { job: 'jobs/contract-events.yaml', read: 'parquet' },
  { job: 'jobs/incremental-latest.yaml', read: 'parquet' },
  { job: 'jobs/nft-holdings.yaml', read: 'parquet', runDay: true },
  { job: 'jobs/s3-export.yaml', read: 'parquet', s3: { bucket: 'insight-exports', prefix: 'warehouse/raw' } },
  { job: 'jobs/token-transfers.yaml', read: 'parquet' },
  { job: 'jobs/wallet-transactions.yaml', read: 'parquet' },
];

const DEMO_FORMATS: { name: string; flags: string[]; read: ReadFormat }[] = [
  { name: 'ndjson', flags: ['--format', 'ndjson'], read: 'ndjson' },
  { name: 'parquet-duckdb', flags: ['--format', 'parquet', '--parquet-engine', 'duckdb'], read: 'parquet' },
  { name: 'parquet-hyparquet', flags: ['--format', 'parquet', '--parquet-engine', 'hyparquet'], read: 'parquet' },
  { name: 'iceberg', flags: ['--format', 'iceberg'], read: 'iceberg' },
];

export const EXPORTS: ExportSpec[] = [
  ...JOB_FILES.map(({ job, read, runDay, s3 }) => ({
    name: job.replace(/\.yaml$/, ''),
    job,
    flags: [],
    split: 'one' as const,
    read,
    served: true,
    ...(runDay ? { runDay } : {}),
    ...(s3 ? { s3 } : {}),
  })),
  ...DEMO_FORMATS.flatMap(({ name, flags, read }) =>
    (['one', 'shards', 'workers'] as const).map((split) => ({
      name: `demo/${name}/${split === 'one' ? 'one-run' : split === 'shards' ? 'shards-4' : 'workers-2'}`,
      job: 'jobs/demo.yaml',
      flags,
      split,
      read,
      served: false,
    })),
  ),
];

/** The argument lists of the runs that make one export into `destination` (or its S3 one; run at once). */
export function runsOf(spec: ExportSpec, destination: string, sandbox: ServedSandbox): string[][] {
  const base = ['run', spec.job, ...(spec.s3 ? [] : ['--destination', destination]), '--json', '--log-level', 'warn', ...spec.flags];
  if (spec.served) base.push('--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl);
  if (spec.split === 'shards') return [0, 1, 2, 3].map((i) => [...base, '--shard', `${i}/4`]);
  if (spec.split === 'workers') return [[...base, '--workers', '2']];
  return [base];
}

/** The environment of a child run: the caller's, without settings that would change the export. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(INSIGHT_|AWS_|S3_|JOB_COMPLETION_)/.test(k)) env[k] = v;
  }
  return env;
}

/** Runs `insight-export <args>` in the repository (`env` added to cleanEnv()); resolves with its exit code and output. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface ServedSandbox {
  url: string;
  explorerUrl: string;
  close(): Promise<void>;
}

/** Starts `insight-export sandbox --port 0` (the default seeded data set) and reads its URLs. */
export async function startServedSandbox(): Promise<ServedSandbox> {
  const child: ChildProcess = spawn(process.execPath, [cli, 'sandbox', '--port', '0'], {
    cwd: root,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const urls = new Map<string, string>();
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`insight-export sandbox ended (exit ${code}) before printing its URLs`)));
    lines.on('line', (line) => {
      const m = /^(\w+)=(.*)$/.exec(line);
      if (m) urls.set(m[1]!, m[2]!);
      if (urls.has('url') && urls.has('explorer_url')) resolve();
    });
  });
  child.removeAllListeners('exit');
  return {
    url: urls.get('url')!,
    explorerUrl: urls.get('explorer_url')!,
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
