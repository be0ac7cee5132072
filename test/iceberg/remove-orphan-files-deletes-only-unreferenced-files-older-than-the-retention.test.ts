/**
 * Issue 34.3: orphan-file removal. What crashes leave in a table's folder (a manifest and a
 * manifest list of a commit that never wrote its metadata file, a data file of a window whose
 * commit never finished, a windows file no snapshot names) goes once it is older than the
 * retention; a file as young as a commit in progress stays, and so does everything something
 * names: the files of every snapshot (the replaced files an older snapshot still reads included),
 * the metadata files, the hint, a file a snapshot's summary names under `insight-export.*-file`,
 * a file a pending marker is uploading, and files the writer does not make. A dry run deletes
 * nothing. verify passes after. Local (ages set on the files) and S3 (the clock set ahead).
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { WINDOWS_FILE_PROPERTY } from '../../src/iceberg/snapshot-windows.js';
import { destinationUri, readCurrentVersion, readSnapshotManifests } from '../../src/iceberg/index.js';
import { removeOrphanFiles } from '../../src/iceberg/remove-orphan-files.js';
import { currentSnapshot } from '../../src/iceberg/table-metadata.js';
import { silentLogger } from '../../src/log.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { exportJob, type CanonRow } from '../helpers/export.js';
import { DAY, defaultRetentionMs, parquetRows, TABLE, verifyIceberg, walletJob } from '../helpers/iceberg-history.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 2_000 });
const bucket = useTestBucket('iceberg-orphans');
const s3Env = useS3CredentialsInEnv();
const tmp = useTempDir('iceberg-orphans-');

const JOB = 'orphans';
const job = walletJob(JOB);

let truth: CanonRow[];

beforeAll(async () => {
  truth = await parquetRows(job, join(tmp.dir, 'truth'), sandbox);
});

async function keys(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list('', { etags: false })) out.push(o.key);
  return out.sort();
}

describe.each(['local', 's3'] as const)('a %s destination', (kind) => {
  const prefix = 'orphans';
  let dir: string;
  let store: ObjectStore;
  const destination = () => (kind === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`);
  const run = (force = false) =>
    exportJob({ job, dir, sandbox, destination: destination(), env: kind === 's3' ? s3Env : {}, flags: { format: 'iceberg' }, force });
  const remove = (now: number, dryRun = false) =>
    removeOrphanFiles({
      store,
      state: new WindowState(store, JOB),
      tables: [TABLE],
      retentionMs: defaultRetentionMs(),
      now: () => now,
      dryRun,
      logger: silentLogger,
    });

  /** Unnamed files a crash leaves, all written before `young`. */
  const orphans: string[] = [];
  /** An unnamed manifest of a commit under way. */
  let young: string;
  /** Files something names that nothing but this test would count as orphans. */
  let windowsFile: string;
  let uploading: string;
  const foreign = `${TABLE}/notes.txt`;
  let before: string[];

  beforeAll(async () => {
    dir = join(tmp.dir, kind);
    store = kind === 'local' ? new LocalStore(join(dir, 'out')) : bucket.store(prefix);
    expect((await run()).iceberg_commits).toMatchObject([{ operation: 'append' }]);
    // The replaced files stay named by snapshot 1.
    expect((await run(true)).iceberg_commits).toMatchObject([{ operation: 'overwrite' }]);

    const root = destinationUri(store);
    const key = (uri: string) => decodeURI(uri.slice(root.length + 1));
    const current = (await readCurrentVersion(store, TABLE))!;
    const manifests = await readSnapshotManifests(store, root, current.meta);
    const dataFile = key(manifests[0]!.entries[0]!.data_file.file_path);
    const copy = async (from: string, to: string) => store.put(to, (await store.get(from))!.body);

    // What a crashed commit and a crashed window leave.
    const crashed = randomUUID();
    orphans.push(`${TABLE}/metadata/${crashed}-m0.avro`, `${TABLE}/metadata/snap-1234-1-${crashed}.avro`);
    await copy(key(manifests[0]!.file.manifest_path), orphans[0]!);
    await copy(key(currentSnapshot(current.meta)!['manifest-list']), orphans[1]!);
    orphans.push(dataFile.replace(/__[^/]*$/, '__crashed-run__0.iceberg.parquet'));
    await copy(dataFile, orphans[2]!);
    orphans.push(`${TABLE}/metadata/${randomUUID()}-windows.ndjson.gz`);
    await store.put(orphans[3]!, 'unnamed');

    // The current snapshot's windows file: named by its summary only.
    windowsFile = key(currentSnapshot(current.meta)!.summary[WINDOWS_FILE_PROPERTY]!);

    // A window being committed: its pending marker names its upload.
    uploading = dataFile.replace(/__[^/]*$/, '__uploading-run__0.iceberg.parquet');
    await copy(dataFile, uploading);
    const unit = (await new WindowState(store, JOB).completedIntervals()).keys().next().value!;
    await store.put(`_state/${JOB}/pending/${unit}/0_1.json`, JSON.stringify({ keys: [uploading] }));
    await store.put(foreign, 'not the writer’s');

    if (kind === 'local') {
      // Everything so far was written 8 days ago.
      const old = new Date(Date.now() - 8 * DAY);
      const walk = (d: string): void => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          if (e.isDirectory()) walk(join(d, e.name));
          else utimesSync(join(d, e.name), old, old);
        }
      };
      walk(join(dir, 'out', TABLE));
    }
    young = `${TABLE}/metadata/${randomUUID()}-m0.avro`;
    await copy(orphans[0]!, young);
    before = await keys(store);
  });

  it('a dry run names every unnamed file older than the retention and deletes nothing', async () => {
    const report = await remove(Date.now() + 8 * DAY, true);
    expect(report.dry_run).toBe(true);
    expect(report.tables[0]!.deleted.sort()).toEqual([...orphans, young].sort());
    expect(report.tables[0]!.foreign).toBe(1);
    expect(await keys(store)).toEqual(before);
  });

  if (kind === 'local') {
    it('unnamed files older than the retention are removed, a younger one and every named file stay', async () => {
      const report = await remove(Date.now());
      expect(report.tables[0]).toMatchObject({ too_young: 1, foreign: 1 });
      expect(report.tables[0]!.deleted.sort()).toEqual([...orphans].sort());
      expect(await keys(store)).toEqual(before.filter((k) => !orphans.includes(k)));
    });
  } else {
    it('unnamed files stay while younger than the retention and go once older; every named file stays', async () => {
      const kept = await remove(Date.now());
      expect(kept.tables[0]).toMatchObject({ deleted: [], too_young: orphans.length + 1 });
      expect(await keys(store)).toEqual(before);
      const report = await remove(Date.now() + 8 * DAY);
      expect(report.tables[0]!.deleted.sort()).toEqual([...orphans, young].sort());
      expect(await keys(store)).toEqual(before.filter((k) => !orphans.includes(k) && k !== young));
    });
  }

  it('the table reads as before, both snapshots whole, and verify passes once the pending commit is cleaned up', async () => {
    for (const k of [windowsFile, uploading, foreign]) expect(await store.head(k), k).not.toBeNull();
    expect(sortedRows(await icebirdRows(store, TABLE))).toEqual(sortedRows(truth));
    expect(sortedRows(await icebirdRows(store, TABLE, 'v1.metadata.json'))).toEqual(sortedRows(truth));
    // The next run removes the unfinished commit's upload and marker, and has nothing to commit.
    expect((await run()).iceberg_commits).toEqual([]);
    expect(await store.head(uploading)).toBeNull();
    const { code, report } = await verifyIceberg({ jobFile: join(dir, 'job.yaml'), destination: destination(), sandbox, s3Env });
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
  });
});
