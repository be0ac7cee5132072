/**
 * Service faults: an export of more than 50,000 rows (200,000 with INSIGHT_EXPORT_LONG_TESTS=1:
 * the same rows per window and page, over about three times the windows) while the sandbox answers 10% of requests
 * with 5xx, 5% with 429 + Retry-After, resets 2% of connections, truncates 1% of bodies and stalls
 * some (0.5%; longer than the client's 2 s timeout; the first requests get each kind of fault for
 * sure, two stalls among them) is byte-for-byte
 * the export of a fault-free run. Past the
 * retry budget the unit fails, the run exits 1 and its report names the unit; the next run
 * completes it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { truthContractEvents, truthWalletTransactions, unixDay } from '../helpers/export.js';
import { LONG_TESTS, RELIABILITY_SEED as SEED, longModeTimeout } from '../helpers/long-tests.js';
import { useSandbox } from '../helpers/sandbox.js';
import { duplicates, readNdjsonExport, runCli, setDigest, writeJob, useTestCli } from './harness.js';

// 640k transactions: alice.eth alone has about 207k rows on the three chains.
// Long mode: 960k, where alice.eth has 232,708 rows from 2024-02-01 to the served end (16% over
// MIN_ROWS; computed with buildSandboxData and truthWalletTransactions as below: 640k gives
// 174,874, 720k 180,687, 800k 204,167, 880k 214,930; the served end moves by hours between sizes).
const sandbox = useSandbox({ transactions: LONG_TESTS ? 960_000 : 640_000 });
/** From 2024-02-01 alice.eth has about 200k rows up to the served end; from noon of the 3rd (the same density) about 60k. */
const FROM = LONG_TESTS ? '2024-02-01T00:00:00Z' : '2024-02-03T12:00:00Z';
const MIN_ROWS = LONG_TESTS ? 200_000 : 50_000;
const CHAINS = [1, 8453, 42161];
/** Long mode: a run of ~233k rows may take up to 450 s under load (runCli's limit is 120 s otherwise). */
const LONG_RUN_MS = 450_000;
const long = LONG_TESTS ? { timeoutMs: LONG_RUN_MS } : {};
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

const work = useTestCli('service-faults-');

const common = (base: string) => ['--staging-dir', join(base, 'staging'), '--log-level', 'error', '--json'];

it(
  `an export of ${MIN_ROWS / 1000}k+ rows under 5xx, 429, resets, truncated and stalled bodies equals the fault-free export`,
  // Long mode: two runs (fault-free, then faulty) of ~233k rows.
  { timeout: longModeTimeout(300_000, 2, LONG_RUN_MS) },
  async () => {
    const from = Date.parse(FROM) / 1000;
    // The last hour every chain serves whole (its head minus the safety lag): the range is complete.
    const to = Math.floor(Math.min(...sandbox.data.chains.map((c) => c.headTimestamp - 900 + 1)) / 3600) * 3600;
    const wallets = ['alice.eth'].map((n) => sandbox.data.wallet(n)!.address);
    const job = {
      name: 'faults',
      source: { base_url: sandbox.url, chains: CHAINS },
      targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
      range: { by: 'time', from, to, chunk: '3h' },
      // Plain NDJSON: the test is about the source side; gzip would only add CPU time.
      output: { format: 'ndjson', compression: 'none' },
    };
    const expected = wallets.flatMap((w) =>
      truthWalletTransactions(sandbox.data, w, CHAINS, { by: 'time', from, to }).map((t) => `${t.chain_id}:${t.hash}:${w}`),
    );
    expect(expected.length).toBeGreaterThanOrEqual(MIN_ROWS);

    const cleanDir = join(work.dir, 'clean');
    const clean = await runCli(work.cli, ['run', await writeJob(cleanDir, job), '-d', join(cleanDir, 'out'), ...common(cleanDir)], long);
    expect(clean.code, clean.stderr).toBe(0);
    const cleanReport = JSON.parse(clean.stdout) as RunReport;

    sandbox.resetStats();
    const mixed = {
      rates: { http500: 0.04, http502: 0.03, http503: 0.03, http429: 0.05, reset: 0.02, truncate: 0.01, stall: 0.005 },
      retryAfterSeconds: 1,
      stallMs: LONG_TESTS ? 30_000 : 10_000,
      seed: SEED,
    };
    // The first requests get one fault of each kind for sure, two stalls (the rates alone may draw
    // none of a kind over the ~80 requests of the run), then the mix applies.
    sandbox.setFaults({ ...mixed, first: ['stall', 'http429', 'http500', 'reset', 'stall', 'http503', 'truncate', 'http502'] });
    const faultyDir = join(work.dir, 'faulty');
    const faulty = await runCli(
      work.cli,
      [
        'run',
        await writeJob(faultyDir, job),
        '-d',
        join(faultyDir, 'out'),
        ...common(faultyDir),
        // A stall must end in a timeout well within the test's patience; enough attempts that ~19% faults never exhaust them.
        // Long mode: 10 s (stalls 30 s): a page of 1,000 decoded rows is 5 MB and 0.3-0.7 CPU-s of the in-process
        // sandbox, 0.6-3.3 s alone at load 16; with 2 s one window timed out 12 times in a row.
        '--timeout',
        LONG_TESTS ? '10s' : '2s',
        '--max-attempts',
        '12',
      ],
      long,
    );
    const stats = sandbox.stats();
    sandbox.setFaults(null);
    expect(faulty.code, faulty.stderr.slice(-3000)).toBe(0);
    const report = JSON.parse(faulty.stdout) as RunReport;

    const a = readNdjsonExport(join(cleanDir, 'out'));
    const b = readNdjsonExport(join(faultyDir, 'out'));
    expect(duplicates(b.itemIds)).toEqual([]);
    expect(b.itemIds.length).toBe(expected.length);
    expect(setDigest(b.itemIds)).toBe(setDigest(expected));
    expect(setDigest(a.itemIds)).toBe(setDigest(expected));
    // Same files with the same bytes (sha256 of each file).
    expect(b.files).toEqual(a.files);
    const verified = await verifyDestination({
      store: new LocalStore(join(faultyDir, 'out')),
      job: await loadJob(join(faultyDir, 'job.yaml')),
    });
    expect(verified.problems).toEqual([]);

    const injected = Object.values(stats.faultsInjected).reduce((n, v) => n + v, 0);
    console.log(
      `[faults] seed ${SEED}: ${b.itemIds.length} rows in ${b.files.size} files compared (row set ${setDigest(b.itemIds)}, every file's sha256 equal); ` +
        `${stats.requests} requests to the sandbox, ${injected} faults injected ${JSON.stringify(stats.faultsInjected)}; ` +
        `client: ${report.requests} attempts, ${report.retries} retries, ${report.responses_429} 429s; ` +
        `fault-free run ${cleanReport.duration_s}s, faulty run ${report.duration_s}s`,
    );
    expect(stats.faultsInjected.http429 ?? 0).toBeGreaterThan(0);
    expect((stats.faultsInjected.http500 ?? 0) + (stats.faultsInjected.http502 ?? 0) + (stats.faultsInjected.http503 ?? 0)).toBeGreaterThan(
      0,
    );
    expect((stats.faultsInjected.reset ?? 0) + (stats.faultsInjected.truncate ?? 0)).toBeGreaterThan(0);
    expect(stats.faultsInjected.stall ?? 0).toBeGreaterThanOrEqual(2);
    expect(report.retries).toBeGreaterThanOrEqual(injected - (stats.faultsInjected.stall ?? 0));
  },
);

it('past the retry budget the unit fails, the run exits 1 naming it, and the next run completes it', { timeout: 120_000 }, async () => {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const base = join(work.dir, 'budget');
  const jobFile = await writeJob(base, {
    name: 'budget',
    source: { base_url: sandbox.url, chains: [1] },
    targets: [
      { wallet: alice, datasets: ['transactions'] },
      { contract: susd, events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to: '2024-02-02', chunk: '6h' },
    output: { format: 'ndjson', destination: join(base, 'out') },
  });
  // Every events request fails with 503: the events unit can never succeed this run.
  sandbox.setFaults({ rates: { http503: 1 }, routes: ['events'], seed: SEED });
  const failed = await runCli(work.cli, ['run', jobFile, ...common(base), '--max-attempts', '3']);
  sandbox.setFaults(null);
  expect(failed.code, failed.stderr).toBe(1);
  const report = JSON.parse(failed.stdout) as RunReport;
  expect(report.status).toBe('failed');
  const eventUnit = `events/${susd}_0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef/1/time`;
  expect(report.failed.map((f) => f.unit)).toEqual([eventUnit, eventUnit, eventUnit, eventUnit]);
  expect(report.failed.map((f) => f.window[0]).sort()).toEqual([0, 6, 12, 18].map((h) => unixDay('2024-02-01') + h * 3600));
  for (const f of report.failed) expect(f.error).toMatch(/503/);
  expect(report.windows.done).toBe(4); // the wallet's windows
  const lastRun = JSON.parse(await readFile(join(base, 'out/_state/budget/last-run.json'), 'utf8')) as RunReport;
  expect(lastRun.failed).toEqual(report.failed);
  // Nothing of the failed unit is at the destination; verify names exactly its windows.
  const store = new LocalStore(join(base, 'out'));
  const before = await verifyDestination({ store, job: await loadJob(jobFile) });
  expect(before.ok).toBe(false);
  expect(before.problems.map((p) => [p.kind, p.unit, p.windows?.length])).toEqual([['missing-windows', eventUnit, 4]]);

  const next = await runCli(work.cli, ['run', jobFile, ...common(base)]);
  expect(next.code, next.stderr).toBe(0);
  const nextReport = JSON.parse(next.stdout) as RunReport;
  expect(nextReport.windows).toMatchObject({ planned: 4, done: 4, failed: 0 });
  const after = await verifyDestination({ store, job: await loadJob(jobFile) });
  expect(after.problems).toEqual([]);
  const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-02') };
  const expected = [
    ...truthWalletTransactions(sandbox.data, alice, [1], range).map((t) => `${t.chain_id}:${t.hash}:${alice}`),
    ...truthContractEvents(sandbox.data, susd, TRANSFER, [1], range).map((e) => `${e.chain_id}:${e.transaction_hash}:${e.log_index}`),
  ];
  const got = readNdjsonExport(join(base, 'out')).itemIds;
  expect(duplicates(got)).toEqual([]);
  expect(setDigest(got)).toBe(setDigest(expected));
  console.log(
    `[faults] retry budget: run 1 exit 1 naming ${report.failed.length} windows of ${eventUnit}; run 2 exit 0, ${got.length} rows exact`,
  );
});
