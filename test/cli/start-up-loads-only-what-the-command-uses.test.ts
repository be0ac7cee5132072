/**
 * Issue 14.8: `--version` took 2-4 s and a cron run of an already-complete job well over a second,
 * because every dependency loaded at start-up. The CLI loads only the command it runs, and a
 * command loads DuckDB, the AWS SDK, the Parquet writer and the zstd wasm only when it writes or
 * reads such files. Seen here through a module-resolution hook that records every module the
 * process resolves (the time itself is measured by bench/startup.ts, not here).
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';
import { useSandbox } from '../helpers/sandbox.js';

const REPO = resolve(import.meta.dirname, '../..');
const TSX = pathToFileURL(join(REPO, 'node_modules/tsx/dist/esm/index.mjs')).href;
const run = promisify(execFile);
const tmp = useTempDir('start-up-');
const service = useSandbox();

const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.MODULE_TRACE, r.url + '\\n');
  return r;
}
`;

/** The packages of node_modules that a CLI process resolved, e.g. ['pino', 'yaml', '@duckdb/node-api']. */
async function packagesLoadedBy(args: string[], trace: string): Promise<{ packages: Set<string>; stdout: string; urls: string[] }> {
  const hooks = join(tmp.dir, 'hooks.mjs');
  const register = join(tmp.dir, 'register.mjs');
  await writeFile(hooks, HOOKS);
  await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  await writeFile(trace, '');
  // tsx first, then the trace hook: the trace sees what tsx resolves.
  const { stdout } = await run(process.execPath, ['--import', TSX, '--import', register, join(REPO, 'src/cli.ts'), ...args], {
    cwd: tmp.dir,
    env: { ...process.env, MODULE_TRACE: trace },
  });
  const packages = new Set<string>();
  const urls = (await readFile(trace, 'utf8')).split('\n');
  for (const url of urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m && !url.includes('/node_modules/tsx/')) packages.add(m[1]!);
  }
  return { packages, stdout, urls };
}

const HEAVY = ['@duckdb/node-api', '@aws-sdk/client-s3', '@aws-sdk/lib-storage', 'hyparquet-writer', '@bokuweb/zstd-wasm', 'hyparquet'];

it('--version prints the version and loads no dependency at all', async () => {
  const { packages, stdout } = await packagesLoadedBy(['--version'], join(tmp.dir, 'version.trace'));
  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
  expect(stdout.trim()).toBe(pkg.version);
  expect([...packages]).toEqual([]);
}, 60_000);

const JOB = `name: start-up
source:
  base_url: sandbox
  chains: [8453]
targets:
  - wallet: alice.eth
    datasets: [transactions]
  - contract: "0xc5e73d5393def808b9548a60ed376b524d6e311d"
    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]
range:
  from: "2024-02-01"
  to: "2024-02-02"
  chunk: 1d
output:
  format: parquet
  destination: ./out
`;

beforeAll(async () => {
  await writeFile(join(tmp.dir, 'job.yaml'), JOB);
});

it('a run of an already-complete local job loads neither DuckDB, the AWS SDK nor the Parquet and zstd code', async () => {
  const first = await packagesLoadedBy(['run', 'job.yaml', '--json', '--log-level', 'silent'], join(tmp.dir, 'first.trace'));
  const firstReport = JSON.parse(first.stdout) as { status: string; rows: number };
  expect(firstReport.status).toBe('succeeded');
  expect(firstReport.rows).toBeGreaterThan(0);
  // The first run wrote Parquet: DuckDB was loaded then (the trace sees it).
  expect(first.packages).toContain('@duckdb/node-api');

  const again = await packagesLoadedBy(['run', 'job.yaml', '--json', '--log-level', 'silent'], join(tmp.dir, 'again.trace'));
  const report = JSON.parse(again.stdout) as { status: string; rows: number; units_skipped: number; units_total: number };
  expect(report.status).toBe('succeeded');
  expect(report.rows).toBe(0);
  expect(report.units_skipped).toBe(report.units_total);
  for (const heavy of HEAVY) expect(again.packages, heavy).not.toContain(heavy);
  // What a run does need is still there (the trace is not empty).
  expect(again.packages).toContain('yargs');
  // A job without `decode` builds no decoder, and a run with nothing to do builds none at all: the
  // decode modules load only with a window to decode.
  expect(again.urls.filter((u) => /\/src\/decode\/(transaction-decoder|abi-file)\./.test(u))).toEqual([]);
}, 180_000);

it('a run against a service (not the built-in sandbox) loads none of the sandbox code', async () => {
  const args = ['run', 'job.yaml', '--json', '--log-level', 'silent', '--base-url', service.url, '--destination', './out-service'];
  const r = await packagesLoadedBy(args, join(tmp.dir, 'service.trace'));
  expect((JSON.parse(r.stdout) as { status: string }).status).toBe('succeeded');
  expect(r.urls.some((u) => u.includes('/src/run/'))).toBe(true);
  expect(r.urls.filter((u) => u.includes('/packages/sandbox/'))).toEqual([]);

  // A cron run of the now complete job checks event signatures and the chain head, and decodes
  // nothing: viem (~350 modules) stays unloaded; the signature parser is abitype's alone.
  const again = await packagesLoadedBy(args, join(tmp.dir, 'service-again.trace'));
  expect((JSON.parse(again.stdout) as { rows: number }).rows).toBe(0);
  expect(again.packages).toContain('abitype');
  for (const heavy of [...HEAVY, 'viem', 'ox']) expect(again.packages, heavy).not.toContain(heavy);
}, 180_000);
