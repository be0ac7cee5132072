/**
 * SIGTERM / SIGINT in the middle of a run: windows in flight finish or are abandoned, the run
 * exits 130 with an "interrupted" report, the state is consistent (nothing pending, every file
 * listed and present, only whole windows missing) and the lease is released; the next run exports
 * what is missing and the result is exact. A second signal ends the run at once, and the next
 * run still recovers.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { parseLease } from '../../src/state/lease.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { truthWalletTransactions, unixDay } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { completedWindowMarkers, duplicates, readNdjsonExport, runCli, setDigest, writeJob, useTestCli } from './harness.js';

// Slow pages so that a run lasts a few seconds and a signal lands in the middle of it.
const sandbox = useSandbox({ latency: { fixedMs: 40, jitterMs: 40 } });
const CHAINS = [1, 8453, 42161];

const work = useTestCli('sigterm-');

/** Sends `signals` (one after the other, 5 ms apart) once the run has completed `after` windows. */
function signalWhenProgressed(out: string, after: number, signals: NodeJS.Signals[]) {
  return (child: ChildProcess) => {
    let sent = false;
    const poll = setInterval(async () => {
      // Polls overlap when a count takes longer than the interval (a loaded machine): only one
      // may send, or a one-signal case sends two and the run ends at once, without its report.
      if (sent || (await completedWindowMarkers(out, 'stop')) < after || sent) return;
      sent = true;
      clearInterval(poll);
      signals.forEach((s, i) => setTimeout(() => child.kill(s), i * 5));
    }, 20);
    child.on('close', () => clearInterval(poll));
  };
}

const cases: { name: string; signals: NodeJS.Signals[] }[] = [
  { name: 'SIGTERM', signals: ['SIGTERM'] },
  { name: 'SIGINT', signals: ['SIGINT'] },
  { name: 'two SIGINTs (the second ends the run at once)', signals: ['SIGINT', 'SIGINT'] },
];

it.each(cases)('$name: exit 130, consistent state, the next run completes exactly', { timeout: 120_000 }, async ({ name, signals }) => {
  const base = join(work.dir, name.replace(/\W+/g, '-'));
  const out = join(base, 'out');
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const jobFile = await writeJob(base, {
    name: 'stop',
    source: { base_url: sandbox.url, chains: CHAINS },
    targets: [{ wallet: alice, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '3h' },
    // Windows committed one by one: many are still to start when the signal lands, so the stop
    // abandons some even though it commits everything it has wholly received.
    output: { format: 'ndjson', destination: out, batch_windows: 'off' },
  });
  const flags = ['--log-level', 'warn', '--units-in-flight', '2', '--staging-dir', join(base, 'staging')];
  const stopped = await runCli(work.cli, ['run', jobFile, ...flags], { onSpawn: signalWhenProgressed(out, 3, signals) });
  const graceful = signals.length === 1;
  if (graceful || stopped.signal === null) expect(stopped.code, stopped.stderr).toBe(ExitCode.interrupted);
  // A second signal after the run already ended its work meets the default handler: killed by it (the shell's 130 too).
  else expect(stopped.signal).toBe(signals[1]);
  expect(stopped.stderr).toMatch(/stopping: no new requests/);
  expect(stopped.stderr).not.toMatch(/internal error|\n\s+at /);

  const store = new LocalStore(out);
  const job = await loadJob(jobFile);
  const midway = await verifyDestination({ store, job });
  if (graceful) {
    // Stopped cleanly: the report says so, the lease is released, nothing is pending, and the only
    // problem is whole windows not exported yet.
    expect(stopped.stdout, stopped.stderr).toMatch(/^interrupted: job stop/);
    const report = JSON.parse(await readFile(join(out, '_state/stop/last-run.json'), 'utf8')) as RunReport;
    expect(report.status).toBe('interrupted');
    expect(report.windows.done).toBeGreaterThanOrEqual(3);
    expect(report.windows.done + report.windows.abandoned + report.windows.failed).toBe(report.windows.planned);
    expect(report.windows.abandoned).toBeGreaterThan(0);
    expect(report.stop).toMatchObject({ signal: signals[0], windows_abandoned: report.windows.abandoned });
    expect(parseLease(await readFile(join(out, '_state/stop/lease.json')))!.released).toBe(true);
    expect(midway.problems.map((p) => p.kind).filter((k) => k !== 'missing-windows')).toEqual([]);
    expect(midway.windows.completed).toBe(report.windows.done);
  } else {
    // Ended at once: whatever it left is recoverable (a pending commit at most), never an overlap or a broken file.
    expect(
      midway.problems.map((p) => p.kind).filter((k) => !['missing-windows', 'pending-commit', 'unreferenced-file'].includes(k)),
    ).toEqual([]);
  }
  expect(midway.windows.missing).toBeGreaterThan(0);

  const next = await runCli(work.cli, ['run', jobFile, ...flags, '--json']);
  expect(next.code, next.stderr).toBe(0);
  const nextReport = JSON.parse(next.stdout) as RunReport;
  expect(nextReport.windows.planned).toBe(midway.windows.missing);
  const got = readNdjsonExport(out).itemIds;
  const expected = truthWalletTransactions(sandbox.data, alice, CHAINS, {
    by: 'time',
    from: unixDay('2024-02-01'),
    to: unixDay('2024-02-04'),
  });
  expect(duplicates(got)).toEqual([]);
  expect(setDigest(got)).toBe(setDigest(expected.map((t) => `${t.chain_id}:${t.hash}:${alice}`)));
  expect((await verifyDestination({ store, job })).problems).toEqual([]);
  console.log(
    `[signals] ${name}: exit ${stopped.code ?? stopped.signal} after ${midway.windows.completed} of ${midway.windows.planned} windows ` +
      `(${midway.problems.length} problems left, kinds ${[...new Set(midway.problems.map((p) => p.kind))].join('/')}); next run exported ${nextReport.windows.done} windows; ${got.length} rows exact`,
  );
});
