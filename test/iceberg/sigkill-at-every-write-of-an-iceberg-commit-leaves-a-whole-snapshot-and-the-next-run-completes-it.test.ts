/**
 * Issue 34: a real SIGKILL of the CLI at every write of an Iceberg table commit (before and after
 * each: the manifests, the manifest list, the metadata file, the version hint, whatever else a
 * commit writes; the crash point `table` of test/reliability/fixtures/crash-points.ts follows every
 * put outside the state). The killed run is a run that appends windows, or a --force run whose
 * commit is an overwrite. Right after the kill every table's current snapshot reads whole with
 * icebird: its rows are exactly those of whole windows a snapshot committed (those of the previous
 * snapshot or more, never part of a window), by the metadata listing and by the version hint alike.
 * The next run exits 0 and each table then equals a fresh export (every item once), and `verify`
 * passes. Local by default, and a sample of points on S3 (radosgw).
 *
 * Seeded: RELIABILITY_SEED=<n> repeats a sample (the seed is printed). By default one point of each
 * phase of a commit runs (a write before its metadata file, just before that file, after it; the
 * write-by-write crash of a-crash-at-any-write-of-a-table-commit covers every write in-process);
 * INSIGHT_EXPORT_LONG_TESTS=1 runs every point (which file, before or after its write).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { beforeAll, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import type { CanonRow } from '../helpers/export.js';
import { freshExportRows, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { LONG_TESTS, RELIABILITY_SEED as SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { s3TestEnv, useTestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { expectWholeWindows as expectWholeWindowsOf } from '../helpers/whole-windows.js';
import {
  ALICE_AND_TRANSFERS_TABLES,
  aliceAndTransfersIcebergJob,
  duplicates,
  runCli,
  useTestCli,
  writeJob,
} from '../reliability/harness.js';

const sandbox = useSandbox({ seed: 39, transactions: 4_000 });
const work = useTestCli('iceberg-sigkill-');
const bucket = useTestBucket('iceberg-sigkill');
const TABLES = ALICE_AND_TRANSFERS_TABLES;
/** The first run's range ends here; the killed run's (and the fresh export's) at END. */
const FIRST_END = '2024-02-02';
const END = '2024-02-04';

const job = (to: string, destination: string) => aliceAndTransfersIcebergJob(sandbox, 'icekill', to, '1d', destination);

type Mode = 'append' | 'force';
interface Trial {
  mode: Mode;
  /** INSIGHT_TEST_CRASH of the killed run. */
  crash: string;
  /** Which file the write is, and before or after it. */
  kind: string;
}

/** Rows of each table of a fresh export of the job up to `to` (the Parquet engine, read by DuckDB). */
const truth: Record<string, Record<string, string[]>> = {};

beforeAll(async () => {
  for (const to of [FIRST_END, END]) {
    const dir = join(work.dir, `truth-${to}`);
    truth[to] = await freshExportRows({ job: job(to, join(dir, 'out')), dir }, TABLES);
  }
  for (const table of TABLES) expect(truth[END]![table]!.length).toBeGreaterThan(truth[FIRST_END]![table]!.length);
});

/** The rows of a table's snapshot are whole windows (test/helpers/whole-windows.ts), none of the first run's lost. */
const expectWholeWindows = (rows: string[], table: string, name: string) =>
  expectWholeWindowsOf(rows, { all: truth[END]![table]!, first: truth[FIRST_END]![table]! }, `${name} ${table}`);

/** Where a kill point lies in its commit: before the commit point (the metadata file), at it, or after it. */
function phaseOf(trial: Trial): string {
  if (trial.kind === 'metadata file before') return 'at the metadata file';
  if (trial.kind === 'metadata file after' || trial.kind.startsWith('version hint')) return 'after the metadata file';
  return 'before the metadata file';
}

/** What a write of a commit is, from its key. */
function fileKind(key: string): string {
  if (/\/metadata\/snap-[^/]+\.avro$/.test(key)) return 'manifest list';
  if (/\/metadata\/[^/]+\.avro$/.test(key)) return 'manifest';
  if (/\/metadata\/v\d+\.metadata\.json$/.test(key)) return 'metadata file';
  if (key.endsWith('/metadata/version-hint.text')) return 'version hint';
  return 'other file';
}

interface Destination {
  /** --destination of the runs. */
  at: string;
  store: ObjectStore;
  env: Record<string, string>;
}

const flags = (base: string) => ['--staging-dir', join(base, 'staging'), '--log-level', 'error'];

/** The first run (up to FIRST_END, undisturbed), then the run up to END that the trial kills. */
async function firstRunThenKilled(base: string, d: Destination, mode: Mode, crashEnv: Record<string, string>) {
  const first = await runCli(work.cli, ['run', await writeJob(base, job(FIRST_END, d.at), 'first.yaml'), ...flags(base)], { env: d.env });
  expect(first.code, first.stderr).toBe(0);
  const jobFile = await writeJob(base, job(END, d.at));
  const killed = await runCli(work.cli, ['run', jobFile, ...flags(base), ...(mode === 'force' ? ['--force'] : [])], {
    env: { ...d.env, ...crashEnv },
  });
  return { jobFile, killed };
}

const probes = new Map<Mode, Promise<string[]>>();
/** The keys of the writes of the killed run's table commits, by an undisturbed probe of each mode (once). */
function probeWrites(mode: Mode): Promise<string[]> {
  if (!probes.has(mode)) probes.set(mode, probe(mode));
  return probes.get(mode)!;
}

async function probe(mode: Mode): Promise<string[]> {
  const base = join(work.dir, `probe-${mode}`);
  const file = join(base, 'table-writes.json');
  const { killed: run } = await firstRunThenKilled(base, local(base), mode, { INSIGHT_TEST_TABLE_WRITES: file });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(await readFile(file, 'utf8')) as string[];
}

const local = (base: string): Destination => ({ at: join(base, 'out'), store: new LocalStore(join(base, 'out')), env: {} });

/** One trial; its time in ms. */
async function runTrial(name: string, base: string, d: Destination, trial: Trial): Promise<number> {
  const t0 = Date.now();
  const { jobFile, killed } = await firstRunThenKilled(base, d, trial.mode, { INSIGHT_TEST_CRASH: trial.crash });
  expect(killed.signal, `${name}: ${killed.stderr}`).toBe('SIGKILL');

  // Right after the kill: the newest metadata file and the hinted one each read as whole windows.
  for (const table of TABLES) {
    const current = (await readCurrentVersion(d.store, table))!;
    expectWholeWindows(
      sortedRows(await icebirdRows(d.store, table, `v${current.version}.metadata.json`)),
      table,
      `${name}: v${current.version}`,
    );
    expectWholeWindows(sortedRows(await icebirdRows(d.store, table)), table, `${name}: by the hint`);
  }

  const next = await runCli(work.cli, ['run', jobFile, ...flags(base)], { env: d.env });

  expect(next.code, `${name}: next run\n${next.stderr}`).toBe(0);
  for (const table of TABLES) {
    const rows = await icebirdRows(d.store, table);
    expect(duplicates(rows.map((r: CanonRow) => r.item_id as string)), `${name} ${table}: duplicate item_ids`).toEqual([]);
    expect(sortedRows(rows), `${name} ${table}`).toEqual(truth[END]![table]);
  }
  const verify = await runCli(work.cli, ['verify', jobFile, '--json'], { env: d.env });

  expect((JSON.parse(verify.stdout) as VerifyReport).problems, name).toEqual([]);
  expect(verify.code, `${name}: verify\n${verify.stderr}`).toBe(0);
  return Date.now() - t0;
}

const POINTS = LONG_TESTS ? 'every write' : 'one write of each phase';
/** Long mode: before and after each of the 10 + 12 writes, 44 trials two at a time, about 40 s each under load. */
const LONG_TRIALS = 44;
const LIMIT = longModeTimeout(400_000, LONG_TRIALS, 40_000);
it(`SIGKILL at ${POINTS} of an append and an overwrite commit, locally`, { timeout: LIMIT }, async () => {
  const random = mulberry32(SEED);
  const all: Trial[] = [];
  const writes = {} as Record<Mode, string[]>;
  for (const mode of ['append', 'force'] as const) {
    writes[mode] = await probeWrites(mode);
    // Each table's commit writes at least a manifest, the manifest list, the metadata file and the hint.
    expect(writes[mode].length).toBeGreaterThanOrEqual(4 * TABLES.length);
    writes[mode].forEach((key, i) => {
      for (const [point, when] of [
        ['table', 'before'],
        ['table-after', 'after'],
      ] as const)
        all.push({ mode, crash: `${point}:${i + 1}`, kind: `${fileKind(key)} ${when}` });
    });
  }
  const trials = sampleEachKind(all, phaseOf, random);
  if (LONG_TESTS) expect(trials.length, 'long mode: raise LONG_TRIALS (the time limit)').toBeLessThanOrEqual(LONG_TRIALS);
  console.log(
    `[iceberg sigkill] seed ${SEED} (RELIABILITY_SEED=${SEED} repeats it); ${trials.length} of ${all.length} points: ` +
      trials.map((t) => `${t.mode} ${t.crash} (${t.kind})`).join(', ') +
      `; writes of the killed run's commits: ${(['append', 'force'] as const).map((m) => `${m} ${writes[m].map(fileKind).join(' / ')}`).join('; ')}`,
  );
  const limit = pLimit(2);
  const settled = await Promise.allSettled(
    trials.map((trial, n) =>
      limit(() => {
        const base = join(work.dir, `trial-${n}`);
        return runTrial(`${trial.mode} ${trial.crash} (${trial.kind})`, base, local(base), trial);
      }),
    ),
  );
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const ms = settled.map((r) => (r as PromiseFulfilledResult<number>).value);
  console.log(`[iceberg sigkill] ${trials.length} kills, each then read whole, run again and verified (${ms.join(', ')} ms); seed ${SEED}`);
});

it(
  'SIGKILL after the metadata file of an append commit on S3 (before it too, with INSIGHT_EXPORT_LONG_TESTS=1)',
  // Long mode: 2 kills on S3, each 30-75 s with its next run under load.
  { timeout: longModeTimeout(200_000, 2, 120_000) },
  async () => {
    const env = await s3TestEnv();
    const writes = await probeWrites('append');
    const metadata = writes.findIndex((k) => fileKind(k) === 'metadata file') + 1;
    expect(metadata).toBeGreaterThan(0);
    for (const crash of LONG_TESTS ? [`table:${metadata}`, `table-after:${metadata}`] : [`table-after:${metadata}`]) {
      const prefix = `trial-${crash.replace(':', '-')}`;
      const d: Destination = { at: `s3://${bucket.bucket}/${prefix}`, store: bucket.store(prefix), env };
      const ms = await runTrial(`S3 ${crash}`, join(work.dir, `s3-${prefix}`), d, { mode: 'append', crash, kind: 'metadata file' });
      console.log(`[iceberg sigkill] S3 ${crash}: killed, read whole, run again and verified in ${ms} ms`);
    }
  },
);
