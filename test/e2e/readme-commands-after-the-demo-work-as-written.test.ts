/**
 * Issue 14.3: after `npm run demo`, the README's next commands work as written, from the same
 * folder: `verify jobs/demo.yaml` proves the demo's output complete, `plan jobs/demo.yaml` has
 * nothing left to export, and the statements of `ddl jobs/demo.yaml --dialect duckdb` (piped into
 * the DuckDB CLI in the README; run here through DuckDB's Node API) query the demo's rows.
 * Issue 32.7: the README links to docs/ for the rest: every `insight-export ... jobs/demo.yaml`
 * command that the README or a file of docs/ shows in a code block runs as written after the demo
 * (exit 0), and so does the DuckDB query they show. Commands on other job files (`jobs/x.yaml`
 * stands for "your job"), servers (`sandbox`) and look-ups (`resolve`, `decode`, `nfts`) are
 * proved by the tests of those commands.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
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
/** The README and the documents it links to under docs/. */
const DOCUMENTS = ['README.md', ...readdirSync(join(REPO, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));

/** The lines of the documents' bash/sh code blocks, each with the document it is in. */
function codeLines(): { doc: string; line: string }[] {
  return DOCUMENTS.flatMap((doc) =>
    [...readFileSync(join(REPO, doc), 'utf8').matchAll(/```(?:bash|sh)\n([\s\S]*?)```/g)].flatMap(([, block]) =>
      block!.split('\n').map((line) => ({ doc, line: line.trim() })),
    ),
  );
}

/** The arguments of every `insight-export` command on jobs/demo.yaml the documents show (up to a `|` or `#`). */
function demoCommands(): { doc: string; argv: string[] }[] {
  const seen = new Map<string, { doc: string; argv: string[] }>();
  for (const { doc, line } of codeLines()) {
    const command = /^(?:npx )?insight-export ([^|#]*)/.exec(line)?.[1]?.trim();
    if (command !== undefined && /(^| )jobs\/demo\.yaml( |$)/.test(command) && !seen.has(command)) {
      seen.set(command, { doc, argv: command.split(/\s+/) });
    }
  }
  return [...seen.values()];
}
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

it('every insight-export command on jobs/demo.yaml in the README and docs/ runs as written (exit 0)', async () => {
  const commands = demoCommands();
  // The README's own (plan, run, verify, verify --recount, run --repair, ddl) at least.
  expect(commands.length).toBeGreaterThanOrEqual(6);
  for (const { doc, argv } of commands) {
    const r = await runCli([...argv, '--log-level', 'silent']);
    expect(r.code, `${doc}: insight-export ${argv.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
  }
}, 180_000);

it('the DuckDB queries the documents show on demo.duckdb read the demo rows', async () => {
  const queries = codeLines().flatMap(({ line }) => {
    const q = /^duckdb demo\.duckdb -c "([^"]+)"/.exec(line)?.[1];
    return q === undefined ? [] : [q];
  });
  expect(queries.length).toBeGreaterThan(0);
  // The views the ddl test above created in demo.duckdb.
  const db = await DuckDBInstance.create(join(tmp.dir, 'demo.duckdb'), { threads: '1' });
  const conn = await db.connect();
  try {
    for (const q of queries) expect((await conn.runAndReadAll(q)).getRows().length, q).toBeGreaterThan(0);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
});
