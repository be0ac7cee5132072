/**
 * `npm run demo` (src/demo.ts): exports jobs/demo.yaml from the in-process sandbox into
 * ./out/parquet and ./out/ndjson, prints what is there and DuckDB query results; a second run
 * resumes (exports nothing) and prints the same summary. Run as a user would, in its own process.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { beforeAll, expect, it } from 'vitest';
import { buildSandboxData } from '@insight-export/sandbox';
import { listFiles, readTable, truthContractEvents, truthWalletTransactions, unixDay } from '../helpers/export.js';
import { useTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const TSX = join(REPO, 'node_modules/.bin/tsx');

const tmp = useTempDir('demo-');
let first: { stdout: string; stderr: string };
let second: { stdout: string; stderr: string };

beforeAll(async () => {
  // A staging directory of its own: in the shared default, the folder of a run another test file
  // killed would be swept by the demo's run, with a warning on stderr.
  const env = { ...process.env, INSIGHT_EXPORT_LOG_LEVEL: 'warn', INSIGHT_EXPORT_STAGING_DIR: join(tmp.dir, 'staging') };
  const opts = { cwd: tmp.dir, env, timeout: 120_000 };
  first = await run(TSX, [join(REPO, 'src/demo.ts')], opts);
  second = await run(TSX, [join(REPO, 'src/demo.ts')], opts);
}, 240_000);

/** The part of the output that describes the files (not the run). */
function summaryOf(stdout: string): string {
  return stdout.slice(stdout.indexOf('What out holds'));
}

it('writes Parquet and NDJSON.gz under ./out of the working directory, 18 files each (3 days x 3 chains x 2 tables), with state', () => {
  const files = listFiles(join(tmp.dir, 'out'));
  expect(files.filter((f) => f.startsWith('parquet/') && f.endsWith('.parquet'))).toHaveLength(18);
  expect(files.filter((f) => f.startsWith('ndjson/') && f.endsWith('.ndjson.gz'))).toHaveLength(18);
  expect(files.some((f) => f.startsWith('parquet/_state/demo/units/'))).toBe(true);
  expect(files.some((f) => f.startsWith('ndjson/_state/demo/units/'))).toBe(true);
});

it("the output holds exactly the sandbox's rows for the demo job, in both formats", async () => {
  // The demo's in-process sandbox: the default data set (seed 42, 20k transactions).
  const data = buildSandboxData({});
  const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-04') };
  const alice = data.wallet('alice.eth')!.address;
  const txIds = truthWalletTransactions(data, alice, [1, 8453, 42161], range).map((t) => `${t.chain_id}:${t.hash}:${alice}`);
  const evIds = data.contracts
    .filter((c) => c.symbol === 'SUSD')
    .flatMap((c) =>
      truthContractEvents(data, c.address, 'Transfer(address indexed from, address indexed to, uint256 value)', [c.chainId], range),
    )
    .map((e) => `${e.chain_id}:${e.transaction_hash}:${e.log_index}`);
  for (const [format, dir] of [
    ['parquet', 'parquet'],
    ['ndjson', 'ndjson'],
  ] as const) {
    const root = join(tmp.dir, 'out', dir);
    expect((await readTable(root, 'transactions', format)).map((r) => r.item_id).sort()).toEqual(txIds.sort());
    expect(
      (await readTable(root, eventTableForSignature('Transfer(address indexed from, address indexed to, uint256 value)'), format))
        .map((r) => r.item_id)
        .sort(),
    ).toEqual(evIds.sort());
  }
});

it('prints rows per table for both formats and the first rows of DuckDB queries', () => {
  const out = first.stdout;
  expect(out).toMatch(/parquet\s+-> out\/parquet\s+exported 18 windows/);
  expect(out).toMatch(/ndjson\s+-> out\/ndjson\s+exported 18 windows/);
  for (const format of ['parquet', 'ndjson']) {
    expect(out).toMatch(new RegExp(`${format}\\s+transactions\\s+9\\s+\\d+`));
    expect(out).toMatch(new RegExp(`${format}\\s+events_transfer_ddf252ad_\\w+\\s+9\\s+\\d+`));
  }
  expect(out).toContain("read_parquet('out/parquet/transactions/**/*.parquet'");
  // query results: a row per (chain, day) and decoded transfers
  expect(out).toMatch(/^\s+1\s+2024-02-01\s+\d+/m);
  expect(out).toMatch(/2024-02-01 \d\d:\d\d:\d\d\s+\d+\s+0x[0-9a-f]{40}\s+0x[0-9a-f]{40}\s+\d+/);
  expect(first.stderr).toBe('');
});

it('a second run resumes, exports nothing and prints the same summary', () => {
  expect(second.stdout).toMatch(/parquet\s+-> out\/parquet\s+nothing new/);
  expect(second.stdout).toMatch(/ndjson\s+-> out\/ndjson\s+nothing new/);
  expect(summaryOf(second.stdout)).toBe(summaryOf(first.stdout));
  expect(second.stderr).toBe('');
});
