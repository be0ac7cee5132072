/**
 * Issue 42, item 6: SIGINT / SIGTERM in the middle of a batch (a UTC day of windows) keeps what
 * the run has wholly received: it sends no new request, commits within the grace period the part
 * of each batch whose slices are proven (a shorter window, ending where its rows are proven), and
 * abandons only the rest, saying so (log, summary, the report's `stop`). Exit 130. The next run
 * exports only the rest (no row twice) and the destination equals a fresh export. Across
 * `run --workers` the parent passes the signal on and each worker does the same. When the grace
 * period runs out first, what is not committed is abandoned cleanly: nothing pending, no file
 * without its window.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { parseLease } from '../../src/state/lease.js';
import { verifyDestination } from '../../src/state/verify.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import { truthWalletTransactions, unixDay } from '../helpers/export.js';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { aliceTransactionsJob, duplicates, readNdjsonExport, runCli, setDigest, useTestCli, writeJob } from './harness.js';

// About 2,600 of alice's rows a day on each chain (four pages), answered slowly: a stop lands mid-batch.
const LATENCY = { fixedMs: 60, jitterMs: 0 };
const sandbox = useSandbox({ transactions: 100_000, latency: LATENCY });
const work = useTestCli('stop-keeps-');

const transactionRequests = () => sandbox.stats().byRoute.transactions ?? 0;

const CHAINS = [1, 8453, 42161];
/**
 * alice.eth's transactions on three chains from 2024-02-01 for `days` days. One day is enough where
 * the stop lands in the first day (units one at a time): it commits and cuts the same as with more
 * days (it abandons fewer windows), and each next run exports a third of what three days would hold.
 */
function stopJob(out: string, chunk: string, days: number): Record<string, unknown> {
  return { ...aliceTransactionsJob(sandbox, 'stop', chunk, out), range: { from: '2024-02-01', to: `2024-02-0${1 + days}`, chunk } };
}

/** item_id of every row stopJob(_, _, days) must export. */
function stopJobIds(days: number): string[] {
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay(`2024-02-0${1 + days}`) };
  return truthWalletTransactions(sandbox.data, alice, CHAINS, range).map((t) => `${t.chain_id}:${t.hash}:${alice}`);
}

/** Requests for transactions a run sends before its first page (the chain checks ask for one row each): a dry run's. */
async function requestsBeforePaging(jobFile: string, extra: string[] = []): Promise<number> {
  const from = transactionRequests();
  const args = ['run', jobFile, '--dry-run', '--log-level', 'warn', ...extra];
  // In this process where it runs alone; --workers spawns the built CLI.
  const dry = await (extra.length === 0 ? runCliInProcess(args) : runCli(work.cli, args));
  expect(dry.code, dry.stderr).toBe(0);
  return transactionRequests() - from;
}

/** Sends `signal` once the service has been asked for `pages` requests of transactions since the run started. */
function signalAfterPages(pages: number, signal: NodeJS.Signals) {
  return (child: ChildProcess) => {
    const from = transactionRequests();
    const poll = setInterval(() => {
      if (transactionRequests() - from < pages) return;
      clearInterval(poll);
      child.kill(signal);
    }, 5);
    child.on('close', () => clearInterval(poll));
  };
}

const flagsFor = (base: string) => [
  '--log-level',
  'warn',
  '--json',
  '--units-in-flight',
  '1',
  '--requests-in-flight',
  '1',
  '--staging-dir',
  join(base, 'staging'),
];

/** The next run completes the export: every source row once, nothing for verify to find. */
async function expectNextRunCompletes(
  base: string,
  jobFile: string,
  days: number,
  stopped: RunReport,
  extra: string[] = [],
): Promise<RunReport> {
  // Unhurried now: the next run only has to complete the export.
  sandbox.setLatency(null);
  const args = ['run', jobFile, '--log-level', 'warn', '--json', '--staging-dir', join(base, 'staging'), ...extra];
  // In this process where it runs alone (what is checked is the export, not the process); --workers spawns the built CLI.
  const next = await (extra.length === 0 ? runCliInProcess(args) : runCli(work.cli, args)).finally(() => sandbox.setLatency(LATENCY));
  expect(next.code, next.stderr).toBe(0);
  const report = JSON.parse(next.stdout) as RunReport;
  const want = stopJobIds(days);
  // Only the rest: the rows the stop committed are not exported again.
  expect(stopped.rows + report.rows).toBe(want.length);
  const got = readNdjsonExport(join(base, 'out')).itemIds;
  expect(duplicates(got)).toEqual([]);
  expect(setDigest(got)).toBe(setDigest(want));
  expect((await verifyDestination({ store: new LocalStore(join(base, 'out')), job: await loadJob(jobFile) })).problems).toEqual([]);
  return report;
}

it.each([
  { signal: 'SIGINT' as const, chunk: '1d', chunkS: 86_400 },
  { signal: 'SIGTERM' as const, chunk: '6h', chunkS: 21_600 },
])(
  '$signal in the middle of a day ($chunk windows): the part received is committed, the next run exports only the rest',
  { timeout: 180_000 },
  async ({ signal, chunk, chunkS }) => {
    const base = join(work.dir, `${signal}-${chunk}`);
    const out = join(base, 'out');
    const jobFile = await writeJob(base, stopJob(out, chunk, 1));
    const before = await requestsBeforePaging(jobFile);
    // A few pages in: the day's first slices are proven, most of its rows still to come.
    const stopped = await runCli(work.cli, ['run', jobFile, ...flagsFor(base)], { onSpawn: signalAfterPages(before + 4, signal) });
    expect(stopped.code, stopped.stderr).toBe(ExitCode.interrupted);
    expect(stopped.stderr).toMatch(/stopping: no new requests; what is wholly received is committed/);
    expect(stopped.stderr).toMatch(/stopping: committed the part wholly received/);
    expect(stopped.stderr).not.toMatch(/internal error|\n\s+at /);
    const report = JSON.parse(stopped.stdout) as RunReport;
    expect(report.status).toBe('interrupted');
    expect(report.stop).toMatchObject({ signal, grace_s: 25, grace_expired: false });
    const stop = report.stop!;
    // Nothing was committed before the signal (a day is more pages than were asked): all of it was kept by the stop.
    expect(stop.rows_committed).toBeGreaterThan(0);
    expect(report.rows).toBe(stop.rows_committed);
    expect(stop.windows_committed + stop.windows_cut).toBeGreaterThan(0);
    expect(stop.windows_abandoned).toBe(report.windows.abandoned);
    expect(report.windows.done + report.windows.abandoned + report.windows.failed).toBe(report.windows.planned);
    expect(report.windows.done).toBe(stop.windows_committed);

    // The state: whole windows, one of them ending where the rows were proven (off the grid); nothing pending.
    const store = new LocalStore(out);
    const midway = await verifyDestination({ store, job: await loadJob(jobFile) });
    expect(midway.problems.map((p) => p.kind).filter((k) => k !== 'missing-windows')).toEqual([]);
    const intervals = [...(await new WindowState(store, 'stop').completedIntervals()).values()].flat();
    expect(intervals.length).toBeGreaterThan(0);
    expect(intervals.some((w) => w.end % chunkS !== 0)).toBe(true);
    expect(parseLease(await readFile(join(out, '_state/stop/lease.json')))!.released).toBe(true);

    await expectNextRunCompletes(base, jobFile, 1, report);
    console.log(
      `[stop] ${signal} (${chunk}): ${stop.rows_committed} rows committed during the stop in ${stop.windows_committed} whole and ${stop.windows_cut} cut windows, ${stop.windows_abandoned} abandoned; the next run exported the rest`,
    );
  },
);

it(
  'run --workers 2: SIGINT reaches every worker, each keeps what it received; the next run completes exactly',
  { timeout: 180_000 },
  async () => {
    const base = join(work.dir, 'workers');
    const out = join(base, 'out');
    // Three days: each worker's share is still being paged when the signal comes.
    const jobFile = await writeJob(base, stopJob(out, '1d', 3));
    const before = await requestsBeforePaging(jobFile, ['--workers', '2']);
    const stopped = await runCli(work.cli, ['run', jobFile, ...flagsFor(base), '--workers', '2'], {
      onSpawn: signalAfterPages(before + 8, 'SIGINT'),
    });
    expect(stopped.code, stopped.stderr).toBe(ExitCode.interrupted);
    const report = JSON.parse(stopped.stdout) as RunReport;
    expect(report.status).toBe('interrupted');
    expect(report.workers!.map((w) => w.exit_code)).toEqual([ExitCode.interrupted, ExitCode.interrupted]);
    expect(report.stop?.signal).toBe('SIGINT');
    expect(report.stop!.rows_committed).toBeGreaterThan(0);
    expect(report.stop!.windows_abandoned).toBe(report.windows.abandoned);
    await expectNextRunCompletes(base, jobFile, 3, report, ['--workers', '2']);
  },
);

it(
  'the grace period running out abandons what is not committed yet, cleanly; the next run completes exactly',
  { timeout: 180_000 },
  async () => {
    const base = join(work.dir, 'grace');
    const out = join(base, 'out');
    const holdDir = join(base, 'hold');
    await writeJob(holdDir, {});
    const jobFile = await writeJob(base, stopJob(out, '1d', 3));
    const before = await requestsBeforePaging(jobFile);
    const stopped = await runCli(work.cli, ['run', jobFile, ...flagsFor(base), '--stop-grace', '1s'], {
      // The stop's first commit waits at its first state write until the grace period is over.
      env: { INSIGHT_TEST_HOLD: 'state:1', INSIGHT_TEST_HOLD_DIR: holdDir },
      onSpawn: (child) => {
        signalAfterPages(before + 4, 'SIGINT')(child);
        let log = '';
        child.stderr!.on('data', (d: Buffer) => {
          log += d.toString();
          if (/the grace period is over/.test(log) && existsSync(join(holdDir, 'state-1.held')))
            writeFileSync(join(holdDir, 'state-1.go'), '');
        });
      },
    });
    expect(stopped.code, stopped.stderr).toBe(ExitCode.interrupted);
    expect(existsSync(join(holdDir, 'state-1.go'))).toBe(true);
    expect(stopped.stderr).not.toMatch(/did not stop within the grace period|internal error|\n\s+at /);
    const report = JSON.parse(stopped.stdout) as RunReport;
    expect(report.stop).toMatchObject({ signal: 'SIGINT', grace_s: 1, grace_expired: true, rows_committed: 0, windows_committed: 0 });
    expect(report.stop!.windows_abandoned).toBe(report.windows.planned);
    expect(report.rows).toBe(0);
    // Abandoned cleanly: no commit left pending, no file no window lists.
    const midway = await verifyDestination({ store: new LocalStore(out), job: await loadJob(jobFile) });
    expect(midway.problems.map((p) => p.kind).filter((k) => k !== 'missing-windows')).toEqual([]);
    expect(readNdjsonExport(out).itemIds).toEqual([]);
    await expectNextRunCompletes(base, jobFile, 3, report);
  },
);
