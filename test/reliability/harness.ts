/**
 * Helpers of the reliability tests: a bundled build of the CLI (with the crash points of
 * fixtures/crash-points.ts, built once per test run) that starts in well under a second, child runs of it, a scratch
 * folder per test file, and reading an export back as item ids and file checksums.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { bundleCli } from '../../scripts/cli-bundle.js';
import { eventTableForSignature } from '../../src/datasets/events.js';
import type { Sandbox } from '@insight-export/sandbox';
import { listFiles, truthWalletTransactions, unixDay } from '../helpers/export.js';
import { oncePerRun } from '../helpers/once-per-run.js';
import { useForFile } from '../helpers/use-for-file.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface TestCli {
  /** Path of the built CLI (run with `node <path> ...`). */
  path: string;
  remove(): Promise<void>;
}

/**
 * Bundles src/cli.ts and the crash points into `cli/cli.js` and its chunks once per test run
 * (test/helpers/once-per-run.ts), as `npm run build` bundles dist/bin (scripts/cli-bundle.ts), so a
 * child run starts as a user's does: the first caller builds it, the others (other test files, in
 * other workers) wait for it. `remove()` leaves it to the setup's teardown.
 */
export async function buildTestCli(): Promise<TestCli> {
  const dir = await oncePerRun('cli', (outDir) => bundleCli(join(REPO, 'test/reliability/fixtures/cli-with-crash-points.ts'), outDir));
  const path = join(dir, 'cli.js');
  return { path, remove: async () => {} };
}

/**
 * For the calling test file: the built CLI and a fresh folder under the OS temp dir (named
 * `<tmpPrefix>…`), made before all its tests and removed after them. Use the fields inside tests/hooks:
 *   const t = useTestCli('crash-trials-');
 *   it('...', async () => { await runCli(t.cli, ['run', await writeJob(join(t.dir, 'a'), job)]) });
 */
export function useTestCli(tmpPrefix: string): { readonly cli: TestCli; readonly dir: string } {
  return useForFile(
    'useTestCli()',
    async () => ({ cli: await buildTestCli(), dir: await mkdtemp(join(tmpdir(), tmpPrefix)) }),
    async ({ cli, dir }) => {
      await cli.remove();
      await rm(dir, { recursive: true, force: true });
    },
  );
}

const ALICE_CHAINS = [1, 8453, 42161];

/** A job for the export several reliability tests run: alice.eth's transactions on three chains, 2024-02-01 to 2024-02-04, as NDJSON. */
export function aliceTransactionsJob(sandbox: Sandbox, name: string, chunk: string, destination: string): Record<string, unknown> {
  return {
    name,
    source: { base_url: sandbox.url, chains: ALICE_CHAINS },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-04', chunk },
    output: { format: 'ndjson', destination },
  };
}

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
/** The tables of aliceAndTransfersIcebergJob. */
export const ALICE_AND_TRANSFERS_TABLES = ['transactions', eventTableForSignature(TRANSFER)];

/**
 * A job of two Iceberg tables: alice.eth's transactions on chains 1 and 8453, and the SUSD token's
 * Transfer events on chain 1, from 2024-02-01 to `to`.
 */
export function aliceAndTransfersIcebergJob(sandbox: Sandbox, name: string, to: string, chunk: string, destination: string) {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  return {
    name,
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: susd, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to, chunk },
    output: { format: 'iceberg', destination },
  };
}

/** item_id of every row that aliceTransactionsJob's export must hold, from the sandbox's ground truth. */
export function aliceTransactionIds(sandbox: Sandbox): string[] {
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-04') };
  return truthWalletTransactions(sandbox.data, alice, ALICE_CHAINS, range).map((t) => `${t.chain_id}:${t.hash}:${alice}`);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Send `killSignal` (default SIGKILL) this many ms after the start. */
  killAfterMs?: number;
  killSignal?: NodeJS.Signals;
  /** Fail the test if the run takes longer (default 120 s). */
  timeoutMs?: number;
  /** Called with the child once it runs (e.g. to signal it at a chosen moment). */
  onSpawn?(child: import('node:child_process').ChildProcess): void;
}

/** The environment a child gets: nothing of the test runner's shell but PATH and HOME. */
export function childEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'test' };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function runCli(cli: TestCli | string, args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [typeof cli === 'string' ? cli : cli.path, ...args], {
      cwd: opts.cwd ?? REPO,
      env: childEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timers: NodeJS.Timeout[] = [];
    if (opts.killAfterMs !== undefined) timers.push(setTimeout(() => child.kill(opts.killSignal ?? 'SIGKILL'), opts.killAfterMs));
    timers.push(
      setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`CLI run did not end within ${opts.timeoutMs ?? 120_000} ms: ${args.join(' ')}\n${stderr.slice(-2000)}`));
      }, opts.timeoutMs ?? 120_000),
    );
    child.on('error', reject);
    child.on('close', (code, signal) => {
      for (const t of timers) clearTimeout(t);
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
    opts.onSpawn?.(child);
  });
}

export async function writeJob(dir: string, job: Record<string, unknown>, name = 'job.yaml'): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, name);
  await writeFile(file, stringify(job));
  return file;
}

export interface ExportContents {
  /** Data files (relative keys) with their SHA-256. */
  files: Map<string, string>;
  /** item_id of every row, in file order. */
  itemIds: string[];
}

/** Reads every NDJSON(.gz) data file of a local export (state and internal folders excluded). */
export function readNdjsonExport(root: string): ExportContents {
  const files = new Map<string, string>();
  const itemIds: string[] = [];
  for (const rel of listFiles(root)) {
    if (rel.startsWith('_state/') || rel.startsWith('.insight-export-tmp/')) continue;
    const bytes = readFileSync(join(root, rel));
    files.set(rel, createHash('sha256').update(bytes).digest('hex'));
    const text = (rel.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
    for (const line of text.split('\n')) if (line !== '') itemIds.push((JSON.parse(line) as { item_id: string }).item_id);
  }
  return { files, itemIds };
}

/** Order-independent digest of a set of strings (for printing what was compared). */
export function setDigest(values: Iterable<string>): string {
  return createHash('sha256')
    .update([...values].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

export function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const v of values) (seen.has(v) ? dup : seen).add(v);
  return [...dup];
}

/** Completed-window markers a job has written under a local destination so far (0 while there are none). */
export async function completedWindowMarkers(out: string, job: string): Promise<number> {
  const walk = async (d: string): Promise<number> => {
    let n = 0;
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => []))
      n += e.isDirectory() ? await walk(join(d, e.name)) : e.name.endsWith('.json') ? 1 : 0;
    return n;
  };
  return walk(join(out, '_state', job, 'completed'));
}
