/**
 * Issue 33 goal 2: the windows of a day are exported and committed as one batch (one file per
 * partition, one completed record). The exporter is killed (SIGKILL) while a batch pages, uploads
 * and writes its state; the next run then leaves exactly the source's rows, verify finds nothing
 * wrong, and every file is byte-identical to an undisturbed export's (the same windows always
 * make the same batches). A kill during `--force` of one hour, which exports its day's batch again
 * whole, ends the same way.
 */
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { RELIABILITY_SEED, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { useSandbox } from '../helpers/sandbox.js';
import {
  aliceTransactionIds,
  aliceTransactionsJob,
  duplicates,
  readNdjsonExport,
  runCli,
  setDigest,
  useTestCli,
  writeJob,
} from './harness.js';

const sandbox = useSandbox({ latency: { fixedMs: 2, jitterMs: 8 } });
const work = useTestCli('batch-crash-');
const flags = ['--log-level', 'error', '--json', '--units-in-flight', '2'];

it('SIGKILL while batches page, upload and commit: the next run leaves exactly the source rows', { timeout: 600_000 }, async () => {
  // Windows of 3 hours: eight a day, one batch a day and chain.
  const jobAt = async (name: string) => {
    const out = join(work.dir, name);
    return { out, file: await writeJob(join(work.dir, `${name}-job`), aliceTransactionsJob(sandbox, 'batch-crash', '3h', out)) };
  };
  const probe = await jobAt('probe');
  const countsFile = join(mkdtempSync(join(work.dir, 'counts-')), 'counts.json');
  const probed = await runCli(work.cli, ['run', probe.file, ...flags], { env: { INSIGHT_TEST_COUNTS: countsFile } });
  expect(probed.code, probed.stderr).toBe(0);
  const report = JSON.parse(probed.stdout) as { windows: { done: number }; files: number };
  const want = readNdjsonExport(probe.out);
  // Batches: fewer files than windows.
  expect(report.files).toBeLessThan(report.windows.done / 4);
  const counts = JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>;

  const all: [string, number][] = [];
  for (const point of ['page', 'upload', 'state', 'state-after']) {
    const c = counts[point] ?? 0;
    // Pages vary by a few between runs (where a slice is cut depends on timing): not the last one.
    for (const n of new Set([1, Math.ceil(c / 2), point === 'page' ? 1 : c])) if (n >= 1 && n <= c) all.push([point, n]);
  }
  expect(all.length).toBeGreaterThanOrEqual(7);
  const trials = sampleEachKind(all, ([point]) => point, mulberry32(RELIABILITY_SEED));
  let trial = 0;
  const expectExact = async (t: { out: string; file: string }, what: string) => {
    const got = readNdjsonExport(t.out);
    expect(duplicates(got.itemIds), what).toEqual([]);
    expect(setDigest(got.itemIds), what).toBe(setDigest(aliceTransactionIds(sandbox)));
    expect(got.files, what).toEqual(want.files);
    expect((await verifyDestination({ store: new LocalStore(t.out), job: await loadJob(t.file) })).problems, what).toEqual([]);
  };
  for (const [point, n] of trials) {
    const t = await jobAt(`trial-${trial++}`);
    const killed = await runCli(work.cli, ['run', t.file, ...flags], { env: { INSIGHT_TEST_CRASH: `${point}:${n}` } });
    expect(killed.signal, `${point}:${n} ${killed.stderr.slice(-500)}`).toBe('SIGKILL');
    // The run after the kill in this process: what is checked is the destination it leaves.
    const next = await runCliInProcess(['run', t.file, ...flags]);
    expect(next.code, `${point}:${n} ${next.stderr.slice(-1000)}`).toBe(0);
    await expectExact(t, `after a SIGKILL at ${point}:${n}`);
  }

  // A kill while --force of one hour exports its day's batch again.
  // From a copy of the probe's complete export (the same job: its state names no folder).
  const forced = await jobAt('force');
  cpSync(probe.out, forced.out, { recursive: true });
  const hour = ['--force', '--from', '2024-02-02T06:00:00Z', '--to', '2024-02-02T07:00:00Z'];
  const killed = await runCli(work.cli, ['run', forced.file, ...flags, ...hour], { env: { INSIGHT_TEST_CRASH: 'state:1' } });
  expect(killed.signal, killed.stderr.slice(-500)).toBe('SIGKILL');
  const again = await runCliInProcess(['run', forced.file, ...flags, ...hour]);
  expect(again.code, again.stderr.slice(-1000)).toBe(0);
  const rest = await runCliInProcess(['run', forced.file, ...flags]);
  expect(rest.code, rest.stderr.slice(-1000)).toBe(0);
  await expectExact(forced, 'after a SIGKILL during --force of one hour');
  console.log(
    `[batch-crash] seed ${RELIABILITY_SEED}: ${report.windows.done} windows in ${report.files} files; ${trials.length} of ${all.length} kill points and a killed --force, each then exact`,
  );
});
