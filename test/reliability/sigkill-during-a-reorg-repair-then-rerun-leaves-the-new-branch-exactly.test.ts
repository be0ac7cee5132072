/**
 * A repair killed at any point. After an export, the sandbox reorganises the last 12,000 blocks of
 * its chain (more than one window of every unit); each trial starts from a copy of the destination
 * as it was before the repair, runs the repair with SIGKILL at the n-th occurrence of a crash
 * point (a page received, a file uploaded, a state write, just after one, a batch delete), then
 * runs again: the destination is then byte for byte a fresh export of the new branch, even when
 * the killed run had already replaced the newest windows (whose edges then match) but not the
 * older ones. By default a seeded sample runs: a kill at a later occurrence of each point and at
 * the first occurrence of one of them (RELIABILITY_SEED=<n> replays it; INSIGHT_EXPORT_LONG_TESTS=1
 * runs every trial).
 */
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise } from '@insight-export/sandbox';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { RELIABILITY_SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { buildTestCli, readNdjsonExport, runCli, writeJob, type TestCli } from './harness.js';

const CHAIN = 8453;
const sandbox = useSandbox({ transactions: 40_000 });
const tmp = useTempDir('reorg-crash-');
let cli: TestCli;
let targets: string[] = [];

beforeAll(async () => {
  cli = await buildTestCli();
  const senders: string[] = [];
  for (const t of sandbox.data.transactions(CHAIN)) senders.push(t.from_address);
  targets = [sandbox.data.wallet('alice.eth')!.address, ...[...new Set(senders.reverse())].slice(0, 2)];
});
afterAll(async () => {
  await cli?.remove();
});

const job = (destination: string) => ({
  name: 'reorg-crash',
  source: { base_url: sandbox.url, chains: [CHAIN] },
  targets: targets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
  range: { from: '2024-02-04', to: 'latest', safety_lag: '0s', chunk: '6h', reorg_horizon: 20_000 },
  // Windows committed one by one: the repair replaces several windows of every unit, newest first or not.
  output: { format: 'ndjson', destination, batch_windows: 'off' },
});
const flags = ['--log-level', 'error', '--json'];

// Long mode: at most 12 trials (2 occurrences of page, upload and delete, 3 of state and state-after), one
// after another, each a killed run and the next run: 60 s each under load.
const LIMIT = longModeTimeout(900_000, 12, 60_000);
it('SIGKILL at any point of a repair: the next run leaves exactly a fresh export of the new branch', { timeout: LIMIT }, async () => {
  const snapshot = join(tmp.dir, 'snapshot');
  const first = await runCli(cli, ['run', await writeJob(join(tmp.dir, 'snapshot-job'), job(snapshot)), ...flags]);
  expect(first.code, first.stderr).toBe(0);
  reorganise(sandbox.data, CHAIN, 12_000);
  const freshOut = join(tmp.dir, 'fresh');
  const fresh = await runCli(cli, ['run', await writeJob(join(tmp.dir, 'fresh-job'), job(freshOut)), ...flags]);
  expect(fresh.code, fresh.stderr).toBe(0);
  const want = readNdjsonExport(freshOut).files;
  expect(readNdjsonExport(snapshot).files).not.toEqual(want);

  let trial = 0;
  const copy = async () => {
    const out = join(tmp.dir, `trial-${trial++}`);
    cpSync(snapshot, out, { recursive: true });
    return { out, jobFile: await writeJob(join(tmp.dir, `trial-job-${trial}`), job(out)) };
  };

  // A probe run counts the crash points of a repair (and repairs exactly).
  const probe = await copy();
  const countsFile = join(mkdtempSync(join(tmp.dir, 'counts-')), 'counts.json');
  const probed = await runCli(cli, ['run', probe.jobFile, ...flags], { env: { INSIGHT_TEST_COUNTS: countsFile } });
  expect(probed.code, probed.stderr).toBe(0);
  const report = JSON.parse(probed.stdout) as RunReport;
  expect(report.reorgs!.length).toBe(targets.length);
  for (const r of report.reorgs!) expect(r.windows.length).toBeGreaterThan(1);
  expect(readNdjsonExport(probe.out).files).toEqual(want);
  const counts = JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>;

  const all: [string, number][] = [];
  for (const point of ['page', 'upload', 'state', 'state-after', 'delete']) {
    const c = counts[point] ?? 0;
    const at = point === 'state' || point === 'state-after' ? [1, Math.ceil(c / 2), c] : [1, c];
    for (const n of new Set(at)) if (n >= 1 && n <= c) all.push([point, n]);
  }
  expect(all.length).toBeGreaterThanOrEqual(10);
  // Kinds: each point at a later occurrence, and the first occurrence (of a point that has later ones).
  const hasLater = new Set(all.filter(([, n]) => n > 1).map(([point]) => point));
  const kindOf = ([point, n]: [string, number]) => (n === 1 && hasLater.has(point) ? 'first' : point);
  const trials = sampleEachKind(all, kindOf, mulberry32(RELIABILITY_SEED));
  console.log(`[reorg-crash] seed ${RELIABILITY_SEED} (RELIABILITY_SEED repeats it): ${trials.length} of ${all.length} trials`);
  for (const [point, n] of trials) {
    const t = await copy();
    const killed = await runCli(cli, ['run', t.jobFile, ...flags], { env: { INSIGHT_TEST_CRASH: `${point}:${n}` } });
    expect(killed.signal, `${point}:${n} ${killed.stderr.slice(-500)}`).toBe('SIGKILL');
    // The run after the kill in this process: what is checked is the destination it leaves.
    const next = await runCliInProcess(['run', t.jobFile, ...flags]);
    expect(next.code, `${point}:${n} ${next.stderr.slice(-1000)}`).toBe(0);
    expect(readNdjsonExport(t.out).files, `after a SIGKILL at ${point}:${n}`).toEqual(want);
    // Nothing left under repair: the run after that has nothing to do.
    expect((JSON.parse(next.stdout) as RunReport).status, `${point}:${n}`).toBe('succeeded');
  }
  console.log(
    `[reorg-crash] repair of ${report.windows_reexported} windows (${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}): ${trials.length} SIGKILL trials (${trials.map(([p, n]) => `${p}:${n}`).join(' ')}), each followed by a run that left exactly the fresh export`,
  );
});
