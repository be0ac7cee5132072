/**
 * A settling run killed at any point. A first run against a load balancer with a lagging replica
 * leaves windows short (test/helpers/lagging-replica.ts); the service is then consistent, and each
 * trial starts from a copy of that destination, runs with SIGKILL at the n-th occurrence of a
 * crash point (a page received while exporting a window again, a file uploaded, a marker written
 * or just after, a fold write or just after, a batch delete, a settled record written or just
 * after), then runs again: the destination is then byte for byte a fresh export. By default a
 * seeded sample runs, one trial of each kind of point (RELIABILITY_SEED=<n> replays it;
 * INSIGHT_EXPORT_LONG_TESTS=1 runs every trial: the first, middle and last occurrence of each).
 */
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { startLaggingReplica, type LaggingReplica } from '../helpers/lagging-replica.js';
import { RELIABILITY_SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { buildTestCli, readNdjsonExport, runCli, writeJob, type TestCli } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('settle-crash-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
let cli: TestCli;
let lb: LaggingReplica;

beforeAll(async () => {
  cli = await buildTestCli();
  lb = await startLaggingReplica(sandbox.data, Date.parse('2024-02-02T12:00:00Z') / 1000);
});
afterAll(async () => {
  await lb?.close();
  await cli?.remove();
});

const job = (baseUrl: string, destination: string) => ({
  name: 'settle-crash',
  source: { base_url: baseUrl, chains: [1, 8453] },
  targets: [
    { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
    { contract: sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address, chains: [1], events: [TRANSFER] },
  ],
  range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
  output: { format: 'ndjson', destination },
});
const flags = ['--log-level', 'error', '--json'];
const POINTS = ['page', 'upload', 'state', 'state-after', 'fold', 'fold-after', 'delete', 'settle', 'settle-after'];

// Long mode: at most 27 trials (the 9 points, 3 occurrences each), one after another, each a killed
// run and the next run: 60 s each under load.
const LIMIT = longModeTimeout(900_000, POINTS.length * 3, 60_000);
it('SIGKILL at any point of a settling run: the next run leaves exactly a fresh export', { timeout: LIMIT }, async () => {
  const snapshot = join(tmp.dir, 'snapshot');
  const first = await runCli(cli, ['run', await writeJob(join(tmp.dir, 'snapshot-job'), job(lb.url, snapshot)), ...flags]);
  expect(first.code, first.stderr).toBe(0);
  lb.consistent();
  const freshOut = join(tmp.dir, 'fresh');
  const fresh = await runCli(cli, ['run', await writeJob(join(tmp.dir, 'fresh-job'), job(sandbox.url, freshOut)), ...flags]);
  expect(fresh.code, fresh.stderr).toBe(0);
  const want = readNdjsonExport(freshOut).files;
  expect(readNdjsonExport(snapshot).files, 'the lagging replica left windows short').not.toEqual(want);

  let trial = 0;
  const copy = async () => {
    const out = join(tmp.dir, `trial-${trial++}`);
    cpSync(snapshot, out, { recursive: true });
    return { out, jobFile: await writeJob(join(tmp.dir, `trial-job-${trial}`), job(lb.url, out)) };
  };

  // A probe run counts the crash points of a settling run (and settles exactly).
  const probe = await copy();
  const countsFile = join(mkdtempSync(join(tmp.dir, 'counts-')), 'counts.json');
  const probed = await runCli(cli, ['run', probe.jobFile, ...flags], { env: { INSIGHT_TEST_COUNTS: countsFile } });
  expect(probed.code, probed.stderr).toBe(0);
  const report = JSON.parse(probed.stdout) as RunReport;
  expect(report.settle!.reexported).toBeGreaterThan(1);
  expect(readNdjsonExport(probe.out).files).toEqual(want);
  const counts = JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>;

  const all: [string, number][] = [];
  for (const point of POINTS) {
    const c = counts[point] ?? 0;
    for (const n of new Set([1, Math.ceil(c / 2), c])) if (n >= 1 && n <= c) all.push([point, n]);
  }
  expect(new Set(all.map(([point]) => point)), 'every kind of point occurs in a settling run').toEqual(new Set(POINTS));
  const trials = sampleEachKind(all, ([point]) => point, mulberry32(RELIABILITY_SEED));
  console.log(`[settle-crash] seed ${RELIABILITY_SEED} (RELIABILITY_SEED repeats it): ${trials.length} of ${all.length} trials`);
  for (const [point, n] of trials) {
    const t = await copy();
    const killed = await runCli(cli, ['run', t.jobFile, ...flags], { env: { INSIGHT_TEST_CRASH: `${point}:${n}` } });
    expect(killed.signal, `${point}:${n} ${killed.stderr.slice(-500)}`).toBe('SIGKILL');
    // The run after the kill in this process: what is checked is the destination it leaves.
    const next = await runCliInProcess(['run', t.jobFile, ...flags]);
    expect(next.code, `${point}:${n} ${next.stderr.slice(-1000)}`).toBe(0);
    expect(readNdjsonExport(t.out).files, `after a SIGKILL at ${point}:${n}`).toEqual(want);
  }
  console.log(
    `[settle-crash] settling run re-exporting ${report.settle!.reexported} windows (${Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(
        ', ',
      )}): ${trials.length} SIGKILL trials (${trials.map(([p, n]) => `${p}:${n}`).join(' ')}), each followed by a run that left exactly the fresh export`,
  );
});
