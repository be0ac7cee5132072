/**
 * Issue 34.3: expire-snapshots and remove-orphan-files survive a crash at every write and every
 * single delete (before or after it): every snapshot the newest metadata file names still reads
 * whole (icebird), and so does the one the hint names, and running the two commands again leaves
 * exactly the files an uninterrupted expiry leaves.
 *
 * The table: four runs, three of them --force, expired at a clock that drops the first two
 * snapshots and keeps the third and the current one.
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expireSnapshots } from '../../src/iceberg/expire-snapshots.js';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import { removeOrphanFiles } from '../../src/iceberg/remove-orphan-files.js';
import { silentLogger } from '../../src/log.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { Crash, crashingStore } from '../helpers/crashing-store.js';
import { exportJob, type CanonRow } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { DAY, TABLE, verifyIceberg, walletJob } from '../helpers/iceberg-history.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 43, transactions: 2_000 });
const tmp = useTempDir('iceberg-expire-crash-');

const job = { ...walletJob('expirecrash', '2024-02-02', [1]), output: { format: 'iceberg' } };

/** Where every trial runs (metadata addresses files by absolute path: a table is restored in place). */
let work: string;
let rows: CanonRow[];
/** The clock of every expiry: the third snapshot is just within the retention. */
let now: number;
let keptSnapshot: number;

const out = () => join(work, 'out');
const retentionMs = 7 * DAY;
const expire = (store: ObjectStore) =>
  expireSnapshots({ store, state: new WindowState(store, job.name), tables: [TABLE], retentionMs, now: () => now, logger: silentLogger });
const removeOrphans = (store: ObjectStore) =>
  removeOrphanFiles({ store, state: new WindowState(store, job.name), tables: [TABLE], retentionMs, now: () => now, logger: silentLogger });

function restore(from: string): LocalStore {
  rmSync(work, { recursive: true, force: true });
  cpSync(from, work, { recursive: true, preserveTimestamps: true });
  return new LocalStore(out());
}

async function tableKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(`${TABLE}/`, { etags: false })) keys.push(o.key);
  return keys.sort();
}

/** Every snapshot the newest metadata file names reads whole (each run exported the same rows), and so does the hinted one. */
async function expectReadable(store: ObjectStore, name: string): Promise<void> {
  const current = (await readCurrentVersion(store, TABLE))!;
  expect(
    current.meta.snapshots.map((s) => s['snapshot-id']),
    name,
  ).toContain(keptSnapshot);
  for (const s of current.meta.snapshots)
    expect(sortedRows(await icebirdRows(store, TABLE, `v${current.version}.metadata.json`, s['snapshot-id'])), name).toEqual(
      sortedRows(rows),
    );
  expect(sortedRows(await icebirdRows(store, TABLE)), name).toEqual(sortedRows(rows));
}

/** The table before any expiry, and the table files an uninterrupted expiry leaves. */
let base: string;
let expiredBase: string;
let finalKeys: string[];

beforeAll(async () => {
  work = join(tmp.dir, 'work');
  base = join(tmp.dir, 'base');
  expiredBase = join(tmp.dir, 'expired');
  for (const force of [false, true, true, true])
    expect((await exportJob({ job, dir: work, sandbox, destination: out(), force })).status).toBe('succeeded');
  const store = new LocalStore(out());
  const snaps = (await readCurrentVersion(store, TABLE))!.meta.snapshots;
  expect(snaps).toHaveLength(4);
  keptSnapshot = snaps[2]!['snapshot-id'];
  now = snaps[2]!['timestamp-ms'] + retentionMs - 1;
  rows = await icebirdRows(store, TABLE);
  cpSync(work, base, { recursive: true, preserveTimestamps: true });

  const clean = restore(base);
  const report = await expire(clean);
  expect(report.tables[0]!.expired_snapshots).toEqual([snaps[0]!['snapshot-id'], snaps[1]!['snapshot-id']]);
  expect((await removeOrphans(clean)).tables[0]!.deleted).toEqual([]);
  finalKeys = await tableKeys(clean);
  const { code, report: verified } = await verifyIceberg({ jobFile: join(work, 'job.yaml'), destination: out(), sandbox });
  expect(verified.problems).toEqual([]);
  expect(code).toBe(0);

  // The expiry committed and died before its first delete: every file it was to delete is an orphan.
  const committed = restore(base);
  await expect(expire(crashingStore(committed, 2, false))).rejects.toThrow(Crash);
  cpSync(work, expiredBase, { recursive: true, preserveTimestamps: true });
});

/** The writes of a whole run of `fn` from `from`. */
async function writesOf(from: string, fn: (store: ObjectStore) => Promise<unknown>): Promise<number> {
  const probe = crashingStore(restore(from), Number.MAX_SAFE_INTEGER, false);
  await fn(probe);
  return probe.writes;
}

describe('a crash at each write and delete', () => {
  it('of expire-snapshots leaves the table readable, and the commands run again leave what an uninterrupted expiry leaves', async () => {
    const writes = await writesOf(base, expire);
    // The metadata file, the hint, and at least a manifest list, a manifest and a data file of each expired snapshot.
    expect(writes).toBeGreaterThanOrEqual(8);
    for (let budget = 0; budget < writes; budget++) {
      // Writes 1 and 2 are the metadata file and the hint; a crash after a delete is a crash before the next.
      for (const after of budget < 2 ? [false, true] : [false]) {
        const name = `crash at write ${budget + 1} of ${writes}, ${after ? 'after' : 'before'} it`;
        const store = restore(base);
        await expect(expire(crashingStore(store, budget, after)), name).rejects.toThrow(Crash);
        await expectReadable(store, name);
        await expire(store);
        await removeOrphans(store);
        expect(await tableKeys(store), name).toEqual(finalKeys);
        expect(sortedRows(await icebirdRows(store, TABLE)), name).toEqual(sortedRows(rows));
      }
    }
  });

  it('of remove-orphan-files leaves the table readable, and running it again removes the rest', async () => {
    const writes = await writesOf(expiredBase, removeOrphans);
    expect(writes).toBeGreaterThanOrEqual(6);
    // Deletes only: a crash after one is a crash before the next.
    for (let budget = 0; budget < writes; budget++) {
      const name = `crash at delete ${budget + 1} of ${writes}`;
      const store = restore(expiredBase);
      await expect(removeOrphans(crashingStore(store, budget, false)), name).rejects.toThrow(Crash);
      await expectReadable(store, name);
      await removeOrphans(store);
      expect(await tableKeys(store), name).toEqual(finalKeys);
    }
  });
});
