/**
 * Helpers of the ops tests: run the CLI as a child process (the way a scheduler runs a worker),
 * and read an exported destination back.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { ObjectStore } from '../../src/store/store.js';

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

/** `insight-export <args>` from the TypeScript sources (node --import tsx src/cli.ts). */
export function runCli(args: string[], env: Record<string, string>, opts: { onSpawn?(pid: number): void; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli.ts'), ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
