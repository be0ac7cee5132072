/**
 * Issue 14.9: `run --dry-run` plans and checks what a run would (job, config, destination format
 * and ownership, chains served), prints the windows it would export, writes nothing, and exits
 * like a run: 0 when all is well, 2 for what a run would refuse.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('dry-run-');

async function jobFile(dir: string, name: string, chains = [1]): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${name}.yaml`);
  const job = {
    name,
    source: { base_url: 'sandbox', chains },
    targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
    range: { by: 'time', from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
  };
  await writeFile(file, stringify(job));
  return file;
}

const run = (file: string, out: string, ...more: string[]) =>
  runCli(['run', file, '--base-url', sandbox.url, '--destination', out, '--log-level', 'silent', ...more]);

describe('run --dry-run', () => {
  it('exits 0, prints the windows a run would export, and writes nothing at the destination', async () => {
    const dir = join(tmp.dir, 'fresh');
    const out = join(dir, 'out');
    const r = await run(await jobFile(dir, 'fresh'), out, '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^dry run: job fresh -> .*: nothing written/m);
    expect(r.stdout).toMatch(/would export 2 windows/);
    expect(r.stdout.match(/^ {2}transactions\/\S+\/1\/time \[\d+, \d+\)$/gm)).toHaveLength(2);
    expect(existsSync(out)).toBe(false);

    const json = await run(await jobFile(dir, 'fresh'), out, '--dry-run', '--json');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { dry_run: boolean; would_export: unknown[]; rows: number; files: number };
    expect(report).toMatchObject({ dry_run: true, rows: 0, files: 0 });
    expect(report.would_export).toHaveLength(2);
    expect(existsSync(out)).toBe(false);
  });

  it('after a run, plans nothing more and leaves the destination exactly as it was', async () => {
    const dir = join(tmp.dir, 'done');
    const out = join(dir, 'out');
    const file = await jobFile(dir, 'done');
    expect((await run(file, out, '--format', 'ndjson')).code).toBe(0);
    const before = listFiles(out).sort();
    const r = await run(file, out, '--format', 'ndjson', '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/would export 0 windows; 1\/1 units already complete/);
    expect(listFiles(out).sort()).toEqual(before);
  });

  it('refuses (exit 2) what a run would refuse: another format than the destination holds', async () => {
    const dir = join(tmp.dir, 'format');
    const out = join(dir, 'out');
    const file = await jobFile(dir, 'format');
    expect((await run(file, out, '--format', 'ndjson')).code).toBe(0);
    const before = listFiles(out).sort();
    const r = await run(file, out, '--format', 'parquet', '--dry-run');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ndjson/i);
    expect(listFiles(out).sort()).toEqual(before);
  });

  it('refuses (exit 2) a chain the service does not serve, writing nothing', async () => {
    const dir = join(tmp.dir, 'chain');
    const out = join(dir, 'out');
    const r = await run(await jobFile(dir, 'chain', [1, 999999]), out, '--dry-run');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/999999/);
    expect(existsSync(out)).toBe(false);
  });

  it('refuses (exit 2) partitions another job owns, claiming nothing itself', async () => {
    const dir = join(tmp.dir, 'owned');
    const out = join(dir, 'out');
    expect((await run(await jobFile(dir, 'first'), out)).code).toBe(0);
    const before = listFiles(out).sort();
    const r = await run(await jobFile(dir, 'second'), out, '--dry-run');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Another job already exports these partitions/);
    expect(listFiles(out).sort()).toEqual(before);
  });
});
