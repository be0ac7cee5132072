/**
 * Issue 14.11: `import('insight-export')` failed (no `exports`). A Node user (an Airflow or Dagster
 * task, a notebook kernel) imports the API by the package's name, with types: here the package is
 * built into a temporary copy, linked into a temporary project's node_modules, imported by name,
 * and runs a small job against the in-process sandbox; a TypeScript consumer type-checks against
 * the emitted declarations.
 * Issue 31.8: the API was not in the README, `runJob({ job })` threw a TypeError (no config, no
 * logger), and a dead service threw RetriesExhaustedError where the CLI reports a failed run: the
 * documented example (docs/commands.md, linked from the README) runs as written, and a dead
 * service gives a failed report with the exit code.
 * Issue 43: the private workspace package `@insight-export/sandbox` was a dependency, and the
 * declarations imported its types by name: no registry has it, so an install failed, and where it
 * was absent the sandbox's types were `any`. Here the package's node_modules holds its dependencies
 * but not the workspace's packages (as an install from a registry or a folder would), the manifest's
 * dependencies name no workspace package, and a consumer's sandbox types are checked as types.
 */
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';
import { builtDist } from '../helpers/built-package.js';
import { useTempDir } from '../helpers/temp-dir.js';

const REPO = resolve(import.meta.dirname, '../..');
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);
const tmp = useTempDir('library-api-');

const JOB = `name: library-api
source:
  base_url: sandbox
  chains: [8453]
targets:
  - wallet: alice.eth
    datasets: [transactions]
range:
  from: "2024-02-01"
  to: "2024-02-02"
  chunk: 1d
output:
  format: ndjson
  destination: ./out
`;

const MAIN = `import { loadJob, resolveConfig, runJob, silentLogger, UserInputError, InsightExportError } from 'insight-export';
import { writeFile } from 'node:fs/promises';
const job = await loadJob('job.yaml');
const config = resolveConfig({ job, require: ['source', 'destination'] });
const report = await runJob({ job, config, logger: silentLogger });
await writeFile('bad.yaml', 'name: 1\\n');
const bad = await loadJob('bad.yaml').then(() => null, (err) => err);
process.stdout.write(JSON.stringify({ status: report.status, rows: report.rows, files: report.files,
  badIsUserInputError: bad instanceof UserInputError && bad instanceof InsightExportError, badExitCode: bad?.exitCode }));
`;

const CONSUMER = `import { loadJob, resolveConfig, runJob, createLogger, startSandbox, type RunReport, type ResolvedConfig, type Sandbox } from 'insight-export';
export async function exportJob(file: string): Promise<number> {
  const job = await loadJob(file);
  const config: ResolvedConfig = resolveConfig({ job });
  const report: RunReport = await runJob({ job, config, logger: createLogger({ level: config.logLevel }) });
  // @ts-expect-error: the report's row count is a number, the declarations say so
  const wrong: string = report.rows;
  return report.rows + wrong.length;
}
// The sandbox's types, from the declarations dist/ ships (an unresolved import would make them any).
export async function sandboxPort(): Promise<number> {
  const sandbox: Sandbox = await startSandbox({ seed: 1 });
  // @ts-expect-error: a sandbox's url is a string
  const wrong: number = sandbox.url;
  return sandbox.port + wrong;
}
`;

let pkg = '';
let app = '';

beforeAll(async () => {
  // The package as npm would install it: package.json, the build, config/; its dependencies from the
  // repository's node_modules, without the workspace's own packages (no registry has them).
  pkg = join(tmp.dir, 'pkg');
  app = join(tmp.dir, 'app');
  await mkdir(join(pkg, 'node_modules'), { recursive: true });
  await copyFile(join(REPO, 'package.json'), join(pkg, 'package.json'));
  await symlink(join(REPO, 'config'), join(pkg, 'config'));
  for (const name of await readdir(join(REPO, 'node_modules')))
    if (name !== '@insight-export') await symlink(join(REPO, 'node_modules', name), join(pkg, 'node_modules', name));
  // The build (tsconfig.build.json, once per test run), copied: the package's modules find its package.json and config/ above them.
  await cp(await builtDist(), join(pkg, 'dist'), { recursive: true });
  await mkdir(join(app, 'node_modules'), { recursive: true });
  await symlink(pkg, join(app, 'node_modules', 'insight-export'));
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
}, 300_000);

it('the build emits the declarations that package.json names', async () => {
  const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as {
    types: string;
    exports: { '.': { types: string; import: string } };
  };
  expect(manifest.exports['.'].types).toBe(`./${manifest.types}`);
  for (const file of [manifest.exports['.'].types, manifest.exports['.'].import])
    expect((await stat(join(pkg, file))).isFile(), file).toBe(true);
  expect(await readFile(join(pkg, manifest.types), 'utf8')).toMatch(/runJob/);
});

it("the manifest's dependencies name no workspace package: an install from a registry or a folder could not get one", async () => {
  const manifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const workspaces = await Promise.all(
    (await readdir(join(REPO, 'packages'))).map(
      async (dir) => (JSON.parse(await readFile(join(REPO, 'packages', dir, 'package.json'), 'utf8')) as { name: string }).name,
    ),
  );
  expect(workspaces).toContain('@insight-export/sandbox');
  expect(Object.keys(manifest.dependencies).filter((name) => workspaces.includes(name))).toEqual([]);
  expect(Object.keys(manifest.devDependencies)).toEqual(expect.arrayContaining(workspaces));
});

it('a project imports the API by the package name and exports a job through it', async () => {
  await writeFile(join(app, 'job.yaml'), JOB);
  await writeFile(join(app, 'main.mjs'), MAIN);
  const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: app });
  const out = JSON.parse(stdout) as { status: string; rows: number; files: number; badIsUserInputError: boolean; badExitCode: number };
  expect(out.status).toBe('succeeded');
  expect(out.rows).toBeGreaterThan(0);
  expect(out.files).toBeGreaterThan(0);
  expect(out.badIsUserInputError).toBe(true);
  expect(out.badExitCode).toBe(2);
}, 120_000);

it('a TypeScript project type-checks against the declarations', async () => {
  await writeFile(join(app, 'consumer.ts'), CONSUMER);
  const tsconfig = {
    compilerOptions: {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
    },
    files: ['consumer.ts'],
  };
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
  const result = await run(process.execPath, [TSC, '-p', join(app, 'tsconfig.json')], { cwd: app }).then(
    () => '',
    (err: { stdout: string }) => err.stdout,
  );
  expect(result).toBe('');
}, 120_000);

/** The code block under "## Library API" of docs/commands.md (the README links to it). */
async function libraryExample(): Promise<string> {
  const doc = await readFile(join(REPO, 'docs/commands.md'), 'utf8');
  const at = doc.indexOf('\n## Library API\n');
  expect(at, 'a "## Library API" section in docs/commands.md').toBeGreaterThanOrEqual(0);
  const block = /```js\n([\s\S]*?)```/.exec(doc.slice(at));
  expect(block, 'a js block under ## Library API').not.toBeNull();
  return block![1]!;
}

it("the documented library example runs as written: runJob({ job }) with the CLI's defaults", async () => {
  await mkdir(join(app, 'jobs'), { recursive: true });
  await copyFile(join(REPO, 'jobs/demo.yaml'), join(app, 'jobs/demo.yaml'));
  await writeFile(join(app, 'library-example.mjs'), await libraryExample());
  const { stdout, stderr } = await run(process.execPath, ['library-example.mjs'], {
    cwd: app,
    env: { ...process.env, INSIGHT_EXPORT_STAGING_DIR: join(tmp.dir, 'staging') },
  });
  expect(stderr).toBe('');
  const [, rows, files] = /^(\d+) rows in (\d+) files\n$/.exec(stdout) ?? [];
  expect(Number(rows)).toBeGreaterThan(0);
  expect(Number(files)).toBeGreaterThan(0);
}, 120_000);

it('a dead service gives a failed report with the exit code, as the CLI reports it, not an exception', async () => {
  const port = await new Promise<number>((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
  await writeFile(
    join(app, 'dead.yaml'),
    JOB.replace('base_url: sandbox', `base_url: http://127.0.0.1:${port}/insights/v1`)
      .replace('./out', './dead-out')
      .replace('alice.eth', '0x344940aef33a4e9915b793dfe282f3727eff9869')
      .concat('retries:\n  max_attempts: 2\n'),
  );
  const main = `import { loadJob, resolveConfig, runJob, silentLogger } from 'insight-export';
const job = await loadJob('dead.yaml');
const config = resolveConfig({ job, require: ['source', 'destination'] });
const report = await runJob({ job, config, logger: silentLogger }).catch((err) => ({ threw: err.name }));
process.stdout.write(JSON.stringify(report));
`;
  await writeFile(join(app, 'dead.mjs'), main);
  const { stdout } = await run(process.execPath, ['dead.mjs'], { cwd: app });
  const report = JSON.parse(stdout) as { threw?: string; status: string; exit_code: number; error: string; job: string };
  expect(report.threw).toBeUndefined();
  expect(report).toMatchObject({ job: 'library-api', status: 'failed', exit_code: 1 });
  expect(report.error).toContain(`127.0.0.1:${port}`);
}, 120_000);
