/**
 * Issue 14.3: after `npm run demo`, the README's next commands work as written, from the same
 * folder: `verify jobs/demo.yaml` proves the demo's output complete, `plan jobs/demo.yaml` has
 * nothing left to export, and the statements of `ddl jobs/demo.yaml --dialect duckdb` (piped into
 * the DuckDB CLI in the README; run here through DuckDB's Node API) query the demo's rows.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const TSX = join(REPO, 'node_modules/.bin/tsx');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');
const tmp = useTempDir('demo-readme-');
const cwd = process.cwd();

beforeAll(async () => {
  // A checkout's layout in a fresh folder: the job file where the README names it.
  mkdirSync(join(tmp.dir, 'jobs'));
  copyFileSync(join(REPO, 'jobs', 'demo.yaml'), join(tmp.dir, 'jobs', 'demo.yaml'));
  await run(TSX, [join(REPO, 'src/demo.ts')], {
    cwd: tmp.dir,
    // A staging directory of its own: in the shared default, the folder of a run another test file
    // killed would be swept by these runs, with a warning on stderr.
    env: { ...process.env, INSIGHT_EXPORT_LOG_LEVEL: 'warn', INSIGHT_EXPORT_STAGING_DIR: join(tmp.dir, 'staging') },
    timeout: 120_000,
  });
  process.chdir(tmp.dir);
}, 180_000);

afterAll(() => process.chdir(cwd));

it('the README shows verify, plan and ddl | duckdb on jobs/demo.yaml', () => {
  expect(README).toContain('verify jobs/demo.yaml');
  expect(README).toContain('plan jobs/demo.yaml');
  expect(README).toContain('ddl jobs/demo.yaml --dialect duckdb | duckdb demo.duckdb');
});

it('verify jobs/demo.yaml: the demo output is complete (exit 0)', async () => {
  const r = await runCli(['verify', 'jobs/demo.yaml', '--log-level', 'silent']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

it('verify jobs/demo.yaml --recount: the service counts the rows the files hold; run --repair has nothing to do', async () => {
  expect(README).toContain('verify jobs/demo.yaml --recount');
  expect(README).toContain('run jobs/demo.yaml --repair');
  const r = await runCli(['verify', 'jobs/demo.yaml', '--recount', '--log-level', 'silent']);
  expect(r.code, r.stdout).toBe(0);
  const recount = /recount: (\d+) windows asked of the service in \d+ requests .*: (\d+) equal, 0 differ, 0 not provable/.exec(r.stdout);
  expect(recount, r.stdout).not.toBeNull();
  expect(Number(recount![1])).toBeGreaterThan(0);
  expect(recount![2]).toBe(recount![1]);
  const repair = await runCli(['run', 'jobs/demo.yaml', '--repair', '--json', '--log-level', 'silent']);
  expect(repair.code).toBe(0);
  expect((JSON.parse(repair.stdout) as { windows: { done: number } }).windows.done).toBe(0);
}, 120_000);

it('plan jobs/demo.yaml: nothing left to export', async () => {
  const r = await runCli(['plan', 'jobs/demo.yaml', '--json', '--log-level', 'silent']);
  expect(r.code).toBe(0);
  const { plan } = JSON.parse(r.stdout) as { plan: { units: unknown[]; coverage: { done: unknown[] }[] } };
  expect(plan.units).toEqual([]);
  expect(plan.coverage.every((c) => c.done.length > 0)).toBe(true);
});

it('ddl jobs/demo.yaml --dialect duckdb: its views read the demo rows', async () => {
  const r = await runCli(['ddl', 'jobs/demo.yaml', '--dialect', 'duckdb', '--log-level', 'silent']);
  expect(r.code).toBe(0);
  const db = await DuckDBInstance.create(join(tmp.dir, 'demo.duckdb'), { threads: '1' });
  const conn = await db.connect();
  try {
    await conn.run(r.stdout);
    const rows = (
      await conn.runAndReadAll('SELECT chain_id, date, count(*) AS n FROM transactions GROUP BY ALL ORDER BY ALL')
    ).getRowObjectsJS();
    // 3 chains x 3 days (1 to 3 February).
    expect(rows.length).toBe(9);
    expect(rows.every((x) => Number(x.n) > 0)).toBe(true);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
});
