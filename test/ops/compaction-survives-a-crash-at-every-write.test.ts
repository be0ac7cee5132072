/**
 * Compaction merges the small files of closed partitions and keeps state exact, and a crash at
 * any point leaves nothing missing: the store is made to fail (as a killed process would stop) after
 * its 1st, 2nd, ... write, then the next run's recovery and a second compaction must give exactly
 * the source's rows, files that the state lists one to one, and a destination `verify` accepts.
 * By default a seeded sample of the writes (one of each kind, the first and the last; the seed is
 * printed, RELIABILITY_SEED=<n> replays it); INSIGHT_EXPORT_LONG_TESTS=1 crashes at every write.
 */
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/job/schema.js';
import { silentLogger } from '../../src/log.js';
import { compactJob, type CompactOptions } from '../../src/state/compact.js';
import { verifyDestination } from '../../src/state/verify.js';
import { WindowState, type WindowRecord } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { Crash, crashingStore } from '../helpers/crashing-store.js';
import { LONG_TESTS, RELIABILITY_SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { listKeys, runJobAgainst, writeAndLoadJob } from './helpers.js';

const sandbox = useSandbox();
const tmp = useTempDir('ops-compact-');
let db: DuckDBInstance;
const pristine: Record<'parquet' | 'ndjson', { root: string; job: Job; ids: string[] }> = {} as never;

async function exportFixture(format: 'parquet' | 'ndjson'): Promise<void> {
  const root = join(tmp.dir, `pristine-${format}`);
  const jobFile = join(tmp.dir, `compact-${format}.yaml`);
  const job = await writeAndLoadJob(jobFile, {
    name: `compact-${format}`,
    source: { base_url: 'sandbox', chains: [1, 8453] },
    targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
    // 6-hour windows each committed on its own: four small files per unit and day, as frequent
    // incremental runs leave (one run batches its windows into one file a day).
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '6h' },
    output: { format, destination: root, batch_windows: 'off' },
  });
  const report = await runJobAgainst(job, sandbox.url);
  expect(report.status).toBe('succeeded');
  pristine[format] = { root, job, ids: (await itemIds(root, format)).sort() };
}

/** item_id of every row a reader globbing the folders sees (duplicates included). */
async function itemIds(root: string, format: 'parquet' | 'ndjson'): Promise<string[]> {
  const conn = await db.connect();
  try {
    const glob = `${root}/transactions/*/*/*.${format === 'parquet' ? 'parquet' : 'ndjson.gz'}`;
    const source =
      format === 'parquet'
        ? `read_parquet('${glob}')`
        : `read_json('${glob}', format = 'newline_delimited', columns = {'item_id': 'VARCHAR'})`;
    const r = await conn.runAndReadAll(`SELECT item_id FROM ${source}`);
    return r.getRowObjectsJS().map((row) => row.item_id as string);
  } finally {
    conn.closeSync();
  }
}

async function records(store: ObjectStore, jobName: string): Promise<WindowRecord[]> {
  const out: WindowRecord[] = [];
  for await (const r of new WindowState(store, jobName).completedRecords()) out.push(r);
  return out;
}

function options(store: ObjectStore, jobName: string, extra: Partial<CompactOptions> = {}): CompactOptions {
  return {
    store,
    jobName,
    targetBytes: 64_000_000,
    maxRows: 1_000_000,
    stagingDir: join(tmp.dir, 'staging'),
    logger: silentLogger,
    ...extra,
  };
}

/** Rows exactly once, every data file listed by exactly one window, windows not overlapping, verify clean. */
async function expectExact(root: string, format: 'parquet' | 'ndjson', verify = true): Promise<void> {
  const { job, ids } = pristine[format];
  const store = new LocalStore(root);
  expect((await itemIds(root, format)).sort()).toEqual(ids);
  const recs = await records(store, job.name);
  const listed = recs.flatMap((r) => r.files.map((f) => f.key)).sort();
  expect(new Set(listed).size).toBe(listed.length);
  expect(listed).toEqual((await listKeys(store)).filter((k) => !k.startsWith('_state/')).sort());
  if (!verify) return;
  const v = await verifyDestination({ store, job });
  expect(v.problems).toEqual([]);
  expect(v.ok).toBe(true);
}

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:', { threads: '1' });
  await exportFixture('parquet');
  await exportFixture('ndjson');
}, 120_000);

afterAll(async () => {
  db?.closeSync();
});

/** Long mode: a crash before each of a compaction's 48 writes, one after another, in-process: 10 s each under load. */
const LONG_TRIALS = 48;
const LIMIT = longModeTimeout(180_000, LONG_TRIALS, 10_000);

describe.each(['parquet', 'ndjson'] as const)('compaction of a %s export', (format) => {
  it('merges the closed days of each unit into one file per day and keeps the newest day as it is', async () => {
    const root = join(tmp.dir, `full-${format}`);
    await cp(pristine[format].root, root, { recursive: true });
    const store = new LocalStore(root);
    const before = await records(store, pristine[format].job.name);
    const report = await compactJob(options(store, pristine[format].job.name));
    expect(report.closed_before).toBe('2024-02-03');
    const after = await records(store, pristine[format].job.name);
    const filesOf = (recs: WindowRecord[], date: string) => recs.flatMap((r) => r.files).filter((f) => f.key.includes(`/date=${date}/`));
    for (const date of ['2024-02-01', '2024-02-02']) {
      expect(filesOf(before, date).length).toBeGreaterThan(2 * 2); // two chains, several windows a day
      expect(filesOf(after, date).length).toBe(2); // one file per chain
    }
    expect(
      filesOf(after, '2024-02-03')
        .map((f) => f.key)
        .sort(),
    ).toEqual(
      filesOf(before, '2024-02-03')
        .map((f) => f.key)
        .sort(),
    );
    expect(report.files_after).toBe(after.reduce((n, r) => n + r.files.length, 0));
    await expectExact(root, format);

    // Compacting again finds nothing left to merge.
    const again = await compactJob(options(store, pristine[format].job.name));
    expect(again.groups).toEqual([]);

    // A forced re-export over merged windows replaces them like any others: still exact.
    const { job } = pristine[format];
    const forced = await runJobAgainst(job, sandbox.url, { cliFlags: { destination: root }, force: true });
    expect(forced.status).toBe('succeeded');
    await expectExact(root, format);
  }, 60_000);

  it(
    'after a crash at any write, nothing is missing, and recovery plus a second compaction are exact',
    async () => {
      // How many writes an uninterrupted compaction makes.
      const probeRoot = join(tmp.dir, `probe-${format}`);
      await cp(pristine[format].root, probeRoot, { recursive: true });
      const probe = crashingStore(new LocalStore(probeRoot), Number.MAX_SAFE_INTEGER, false);
      await compactJob(options(probe, pristine[format].job.name));
      const total = probe.writes;
      expect(total).toBeGreaterThan(8);
      const finalFiles = (await listKeys(new LocalStore(probeRoot))).filter((k) => !k.startsWith('_state/')).sort();
      // A crash before write n: by default one of each kind of write, and the very first and last.
      const points = sampleEachKind(
        probe.kinds.map((kind, n) => ({ kind, n })),
        (p) => p.kind,
        mulberry32(RELIABILITY_SEED),
      ).map((p) => p.n);
      const crashes = [...new Set([0, ...points, total - 1])].sort((a, b) => a - b);
      if (LONG_TESTS) expect(crashes.length, 'long mode: raise LONG_TRIALS (the time limit)').toBeLessThanOrEqual(LONG_TRIALS);
      console.log(
        `[compact-crash ${format}] seed ${RELIABILITY_SEED}: crashes before writes ${crashes.join(', ')} of ${total} (${[...new Set(probe.kinds)].join(', ')})`,
      );

      for (const writes of crashes) {
        const root = join(tmp.dir, `crash-${format}-${writes}`);
        await cp(pristine[format].root, root, { recursive: true });
        const local = new LocalStore(root);
        await expect(compactJob(options(crashingStore(local, writes, false), pristine[format].job.name))).rejects.toThrow(Crash);

        // A reader listing the folders misses no row; it sees some twice only while a commit is pending.
        const seen = await itemIds(root, format);
        expect([...new Set(seen)].sort(), `crash after ${writes} writes`).toEqual(pristine[format].ids);
        const pending = (await listKeys(local, `_state/${pristine[format].job.name}/pending/`)).length;
        if (seen.length !== pristine[format].ids.length)
          expect(pending, `duplicates without a pending commit (crash after ${writes})`).toBeGreaterThan(0);

        // What the next run does first, then a second compaction.
        await new WindowState(local, pristine[format].job.name).cleanPending();
        await expectExact(root, format, false);
        await compactJob(options(local, pristine[format].job.name));
        await expectExact(root, format);
        expect((await listKeys(local)).filter((k) => !k.startsWith('_state/')).sort(), `crash after ${writes}`).toEqual(finalFiles);
        await rm(root, { recursive: true, force: true });
      }
    },
    LIMIT,
  );

  it('--older-than and dry runs: only days that ended long enough ago; a dry run writes nothing', async () => {
    const root = join(tmp.dir, `older-${format}`);
    await cp(pristine[format].root, root, { recursive: true });
    const store = new LocalStore(root);
    const keysBefore = await listKeys(store);
    const now = () => Date.parse('2024-02-03T12:00:00Z');
    const dry = await compactJob(options(store, pristine[format].job.name, { olderThanMs: 24 * 3600_000, now, dryRun: true }));
    expect(dry.closed_before).toBe('2024-02-02'); // 2024-02-01 ended 36 h before "now", 2024-02-02 only 12 h
    expect(dry.groups.length).toBe(2);
    expect(dry.groups.every((g) => g.mergedFiles === 1 && g.end === Date.parse('2024-02-02T00:00:00Z') / 1000)).toBe(true);
    expect(await listKeys(store)).toEqual(keysBefore);
    const real = await compactJob(options(store, pristine[format].job.name, { olderThanMs: 24 * 3600_000, now }));
    expect(real.groups.map((g) => [g.unitKey, g.start, g.end])).toEqual(dry.groups.map((g) => [g.unitKey, g.start, g.end]));
    await expectExact(root, format);
  });

  it('plans the units in the same order however the reads of their window markers finish', async () => {
    const root = join(tmp.dir, `order-${format}`);
    await cp(pristine[format].root, root, { recursive: true });
    /** A store whose reads of one unit's markers answer 50 ms late. */
    const slowOn = (chainPart: string): ObjectStore => {
      const inner = new LocalStore(root);
      return Object.assign(Object.create(inner) as ObjectStore, {
        get: async (key: string) => {
          if (key.includes(chainPart)) await new Promise((r) => setTimeout(r, 50));
          return inner.get(key);
        },
      });
    };
    const order = async (store: ObjectStore) =>
      (await compactJob(options(store, pristine[format].job.name, { dryRun: true }))).groups.map((g) => g.unitKey);
    const slowFirst = await order(slowOn('/1/'));
    const slowSecond = await order(slowOn('/8453/'));
    expect(new Set(slowFirst).size).toBe(2);
    expect(slowFirst).toEqual(slowSecond);
    expect(slowFirst).toEqual([...slowFirst].sort());
  });
});
