/**
 * Issue 34: a crash at any write of an Iceberg compaction (the merged windows' markers and uploads,
 * the state's fold, each write of the table's replace commit; before or after the write) leaves a
 * table whose current snapshot reads whole and equal to before, and the table's first snapshot
 * still reads (no file it names is gone). The next `compact`, or a `run` and then a `compact`,
 * finish it: the table equals a fresh export, every snapshot after the first is a `replace` with
 * the same total records, the data files are as many as an uninterrupted compaction leaves, and
 * verify passes.
 *
 * A run after a compaction that died before its table commit commits the merged files as one
 * replace; a compaction after a run that died before its table commit commits the run's windows
 * first (append), then its merges (replace).
 *
 * By default one trial of each kind of write runs (before or after it, recovered by a compact or a
 * run, drawn with the printed seed; RELIABILITY_SEED=<n> repeats it); INSIGHT_EXPORT_LONG_TESTS=1
 * runs every write, before and after, each recovered both ways.
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableCompaction } from '../../src/iceberg/compaction.js';
import {
  committedTables,
  destinationUri,
  readCurrentVersion,
  readSnapshotManifests,
  type IcebergCommitOptions,
} from '../../src/iceberg/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { jobTables } from '../../src/run/tables.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { compactJob } from '../../src/state/compact.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { Crash, crashingStore } from '../helpers/crashing-store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob, readTable } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { LONG_TESTS, RELIABILITY_SEED as SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 2_000 });
const tmp = useTempDir('iceberg-compact-crash-');

/** 2-hour windows each committed on its own: one closed day of small files per chain. */
const job = (destination: string) => ({
  name: 'icecrash',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to: '2024-02-03', chunk: '6h' },
  output: { format: 'iceberg', destination, batch_windows: 'off' },
});

/** Table metadata addresses files by absolute path: every trial restores the base in place. */
let work: string;
let base: string;
let truth: string[];
let tables: IcebergCommitOptions['tables'];
const out = () => join(work, 'out');

function restore(): LocalStore {
  rmSync(work, { recursive: true, force: true });
  cpSync(base, work, { recursive: true });
  return new LocalStore(out());
}

const compact = (store: ObjectStore) =>
  compactJob({
    store,
    jobName: 'icecrash',
    targetBytes: 64_000_000,
    maxRows: 1_000_000,
    stagingDir: join(tmp.dir, 'staging'),
    tables: tableCompaction({ store, tables, partitioning: DEFAULT_PARTITIONING, compression: 'zstd', logger: silentLogger }),
    logger: silentLogger,
  });

/** The data files the current snapshot lists. */
async function liveFiles(store: ObjectStore): Promise<string[]> {
  const current = (await readCurrentVersion(store, 'transactions'))!;
  return (await readSnapshotManifests(store, destinationUri(store), current.meta)).flatMap((m) =>
    m.entries.filter((e) => e.status !== 2).map((e) => e.data_file.file_path),
  );
}

let filesBefore: number;
let filesAfter: number;
let records: string;

beforeAll(async () => {
  const fresh = join(tmp.dir, 'fresh');
  const r = await exportJob({
    job: job(join(fresh, 'out')),
    dir: fresh,
    sandbox,
    destination: join(fresh, 'out'),
    flags: { format: 'parquet' },
  });
  expect(r.status).toBe('succeeded');
  truth = sortedRows(await readTable(join(fresh, 'out'), 'transactions', 'parquet'));
  expect(truth.length).toBeGreaterThan(20);

  work = join(tmp.dir, 'work');
  base = join(tmp.dir, 'base');
  expect((await exportJob({ job: job(out()), dir: work, sandbox, destination: out() })).status).toBe('succeeded');
  const store = new LocalStore(out());
  expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(truth);
  filesBefore = (await liveFiles(store)).length;
  records = (await readCurrentVersion(store, 'transactions'))!.meta.snapshots[0]!.summary['total-records']!;
  cpSync(work, base, { recursive: true });
  tables = await committedTables(new LocalStore(out()), 'icecrash', await jobTables(await loadJob(join(work, 'job.yaml'))));
});

/** The table equals the fresh export; each snapshot after the first is a replace keeping its records; verify passes. */
async function expectFinished(store: LocalStore, name: string): Promise<void> {
  expect(sortedRows(await icebirdRows(store, 'transactions')), name).toEqual(truth);
  const current = (await readCurrentVersion(store, 'transactions'))!;
  const [, ...later] = current.meta.snapshots;
  expect(later.length, name).toBeGreaterThan(0);
  for (const s of later) expect(s.summary, name).toMatchObject({ operation: 'replace', 'total-records': records });
  expect((await liveFiles(store)).length, name).toBe(filesAfter);
  const verify = await runCli(['verify', join(work, 'job.yaml'), '--base-url', sandbox.url, '--json', '--log-level', 'silent']);
  expect(JSON.parse(verify.stdout).problems, name).toEqual([]);
  expect(verify.code, name).toBe(0);
  // Nothing left to merge or to commit.
  const again = await compact(store);
  expect([again.groups, again.iceberg_commits], name).toEqual([[], []]);
}

/** The writes of an uninterrupted compaction, by kind. */
let kinds: readonly string[];

beforeAll(async () => {
  const probe = crashingStore(restore(), Number.MAX_SAFE_INTEGER, false);
  const uninterrupted = await compact(probe);
  expect(uninterrupted.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'replace' }]);
  filesAfter = (await liveFiles(new LocalStore(out()))).length;
  expect(filesAfter).toBeLessThan(filesBefore);
  // Per chain: a pending marker, the merged file, the completed marker, the old markers and the pending marker
  // removed; the fold; the replace commit's manifests, manifest list, metadata file and hint.
  kinds = probe.kinds;
  for (const kind of ['put pending', 'put data', 'put completed', 'delete completed', 'delete pending', 'put manifest', 'put metadata'])
    expect(kinds).toContain(kind);
});

/** Long mode: 28 writes x before/after x compact/run, one after another, in-process: 8 s each under load. */
const LONG_TRIALS = 112;
const LIMIT = longModeTimeout(600_000, LONG_TRIALS, 8_000);

describe('an Iceberg compaction crashed at each of its writes', () => {
  it(
    'leaves the table whole and as before; the next compact, or a run, finishes it exactly',
    async () => {
      const all = kinds.flatMap((kind, budget) =>
        [false, true].flatMap((after) => (['compact', 'run'] as const).map((recovery) => ({ kind, budget, after, recovery }))),
      );
      const trials = sampleEachKind(all, (t) => t.kind, mulberry32(SEED));
      if (LONG_TESTS) expect(trials.length, 'long mode: raise LONG_TRIALS (the time limit)').toBeLessThanOrEqual(LONG_TRIALS);
      console.log(
        `[iceberg compact crash] seed ${SEED} (RELIABILITY_SEED=${SEED} repeats it); ${trials.length} of ${all.length} trials: ` +
          trials.map((t) => `write ${t.budget + 1} (${t.kind}) ${t.after ? 'after' : 'before'}, ${t.recovery}`).join('; '),
      );

      for (const { budget, after, recovery, kind } of trials) {
        const name = `crash at write ${budget + 1} (${kind}), ${after ? 'after' : 'before'} it, recovered by ${recovery}`;
        const store = restore();
        await expect(compact(crashingStore(store, budget, after)), name).rejects.toThrow(Crash);

        // Readers: the current snapshot (by the newest metadata file, and by the hint) reads as before; so does the first.
        const current = (await readCurrentVersion(store, 'transactions'))!;
        expect(sortedRows(await icebirdRows(store, 'transactions', `v${current.version}.metadata.json`)), name).toEqual(truth);
        expect(sortedRows(await icebirdRows(store, 'transactions')), name).toEqual(truth);
        expect(sortedRows(await icebirdRows(store, 'transactions', 'v1.metadata.json')), name).toEqual(truth);

        // A run's end commits what the compaction left in the state, as a replace.
        if (recovery === 'run') {
          const run = await exportJob({ job: job(out()), dir: work, sandbox, destination: out() });
          expect(run.status, name).toBe('succeeded');
          expect(
            run.iceberg_commits!.filter((c) => c.operation !== 'replace'),
            name,
          ).toEqual([]);
        }
        await compact(store);
        await expectFinished(store, name);
      }
    },
    LIMIT,
  );

  it('crashed before its table commit, the next run commits the merged files as one replace snapshot', async () => {
    const store = restore();
    await expect(compact(crashingStore(store, kinds.indexOf('put manifest'), false))).rejects.toThrow(Crash);
    expect((await readCurrentVersion(store, 'transactions'))!.version).toBe(1);
    const run = await exportJob({ job: job(out()), dir: work, sandbox, destination: out() });
    expect(run.status).toBe('succeeded');
    expect(run.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'replace' }]);
    expect((await readCurrentVersion(store, 'transactions'))!.version).toBe(2);
    await expectFinished(store, 'run after a crash before the table commit');
  });

  it('after a run that died before its table commit, compact commits its windows first, then the merges as a replace', async () => {
    const store = restore();
    // The first run of the job died between its windows' commits and the table's first commit.
    rmSync(join(out(), 'transactions', 'metadata'), { recursive: true });
    const report = await compact(store);
    expect(report.iceberg_commits).toMatchObject([
      { table: 'transactions', operation: 'append', deleted_files: 0 },
      { table: 'transactions', operation: 'replace' },
    ]);
    const current = (await readCurrentVersion(store, 'transactions'))!;
    expect(current.version).toBe(2);
    expect(current.meta.snapshots.map((s) => s.summary['total-records'])).toEqual([records, records]);
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(truth);
    expect(sortedRows(await icebirdRows(store, 'transactions', 'v1.metadata.json'))).toEqual(truth);
    expect((await liveFiles(store)).length).toBe(filesAfter);
  });
});
