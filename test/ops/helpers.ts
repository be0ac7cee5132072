/**
 * Helpers of the ops tests: run the CLI as a child process (the way a scheduler runs a worker),
 * run a job in-process against the sandbox, and read an exported destination back.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { resolveConfig, type CliFlags } from '../../src/config/index.js';
import { loadJob } from '../../src/job/index.js';
import type { Job } from '../../src/job/schema.js';
import { silentLogger } from '../../src/log.js';
import type { RunReport } from '../../src/run/report.js';
import { runJob } from '../../src/run/run-job.js';
import type { ObjectStore } from '../../src/store/store.js';
import { buildTestCli } from '../reliability/harness.js';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Only what a worker needs from this process's environment (no config leaks in from the shell). */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return { ...env, INSIGHT_EXPORT_LOG_LEVEL: 'warn', ...extra };
}

/** `insight-export <args>` from the run's bundled build of the sources (test/reliability/harness.ts buildTestCli). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { onSpawn?(pid: number): void; timeoutMs?: number } = {},
): Promise<CliResult> {
  const cli = await buildTestCli();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli.path, ...args], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('spawn', () => opts.onSpawn?.(child.pid!));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Every key under a prefix of a store. */
/** Writes `spec` to `file` as YAML and loads it as a job. */
export async function writeAndLoadJob(file: string, spec: Record<string, unknown>): Promise<Job> {
  await writeFile(file, stringify(spec));
  return loadJob(file);
}

/** Runs a job in-process (silent) against the sandbox at `baseUrl`, as `--base-url` would, with more CLI flags if given. */
export function runJobAgainst(job: Job, baseUrl: string, opts: { cliFlags?: CliFlags; force?: boolean } = {}): Promise<RunReport> {
  const config = resolveConfig({
    job,
    cliFlags: { baseUrl, ...opts.cliFlags },
    env: {},
    configFile: null,
    require: ['source', 'destination'],
  });
  return runJob({ job, config, logger: silentLogger, force: opts.force });
}

export async function listKeys(store: ObjectStore, prefix = ''): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(prefix)) keys.push(o.key);
  return keys;
}

/** Rows of an NDJSON(.gz) object. */
export async function readNdjson(store: ObjectStore, key: string): Promise<Record<string, unknown>[]> {
  const obj = await store.get(key);
  if (!obj) throw new Error(`missing object ${key}`);
  const text = (key.endsWith('.gz') ? gunzipSync(obj.body) : obj.body).toString('utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export function readJsonFile<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
