/**
 * Issue 34.3: snapshot expiry. After four runs (two of them --force, whose replaced files the
 * older snapshots still name), `expireSnapshots` at a clock set days ahead writes the next
 * metadata version without the snapshots committed before the retention's cutoff, then deletes
 * exactly what only they named: their manifest lists, manifests and data files, and the metadata
 * files the trimmed metadata-log no longer names. The current snapshot and every kept one read
 * (icebird) as they did before, the state's live files are untouched, and verify passes. The
 * default retention (7d) keeps a snapshot 6 days old and expires one 8 days old; a dry run
 * changes nothing. Local and S3. And a file the state lists stays even when only an expired
 * snapshot names it (a table behind its state): the next commit names it again.
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readManifests } from '../../src/iceberg/commit-table.js';
import { expireSnapshots } from '../../src/iceberg/expire-snapshots.js';
import { WINDOWS_FILE_PROPERTY } from '../../src/iceberg/snapshot-windows.js';
import { destinationUri, readCurrentVersion } from '../../src/iceberg/index.js';
import type { Snapshot } from '../../src/iceberg/table-metadata.js';
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

const sandbox = useSandbox({ seed: 41, transactions: 3_000 });
const bucket = useTestBucket('iceberg-expire');
const s3Env = useS3CredentialsInEnv();
const tmp = useTempDir('iceberg-expire-');

const job = (to: string) => walletJob('expire', to);

let truthFirst: CanonRow[];
let truthAll: CanonRow[];

beforeAll(async () => {
  expect(defaultRetentionMs()).toBe(7 * DAY);
  truthFirst = await parquetRows(job('2024-02-02'), join(tmp.dir, 'truth-first'), sandbox);
  truthAll = await parquetRows(job('2024-02-04'), join(tmp.dir, 'truth-all'), sandbox);
});

/** Keys a snapshot names: its manifest list, its manifests, the data files it reads, its windows file. */
async function namedBy(store: ObjectStore, s: Snapshot): Promise<string[]> {
  const root = destinationUri(store);
  const key = (uri: string) => decodeURI(uri.slice(root.length + 1));
  const manifests = await readManifests(store, root, s);
  return [
    key(s['manifest-list']),
    ...manifests.map((m) => key(m.file.manifest_path)),
    ...manifests.flatMap((m) => m.entries.filter((e) => e.status !== 2).map((e) => key(e.data_file.file_path))),
    key(s.summary[WINDOWS_FILE_PROPERTY]!),
  ];
}

async function listing(store: ObjectStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const o of store.list('')) if (!o.key.startsWith('_state/')) out.set(o.key, o.etag);
  return out;
}

async function stateFiles(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const rec of new WindowState(store, 'expire').completedRecords()) out.push(...rec.files.map((f) => f.key));
  return out;
}

describe.each(['local', 's3'] as const)('a %s destination', (kind) => {
  const prefix = 'expire';
  let dir: string;
  let store: ObjectStore;
  const destination = () => (kind === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`);
  const run = (to: string, force = false) =>
    exportJob({
      job: job(to),
      dir,
      sandbox,
      destination: destination(),
      env: kind === 's3' ? s3Env : {},
      flags: { format: 'iceberg' },
      force,
    });
  const expire = (now: number, dryRun = false) =>
    expireSnapshots({
      store,
      state: new WindowState(store, 'expire'),
      tables: [TABLE],
      retentionMs: defaultRetentionMs(),
      now: () => now,
      dryRun,
      logger: silentLogger,
    });
  const verify = () => verifyIceberg({ jobFile: join(dir, 'job.yaml'), destination: destination(), sandbox, s3Env });

  /** Snapshots 1-4, the rows each reads, and what each names, before any expiry. */
  let snaps: Snapshot[];
  const rowsOf = new Map<number, string[]>();
  const names = new Map<number, string[]>();

  beforeAll(async () => {
    dir = join(tmp.dir, kind);
    store = kind === 'local' ? new LocalStore(join(dir, 'out')) : bucket.store(prefix);
    expect((await run('2024-02-02')).iceberg_commits).toMatchObject([{ operation: 'append' }]);
    expect((await run('2024-02-04')).iceberg_commits).toMatchObject([{ operation: 'append' }]);
    expect((await run('2024-02-04', true)).iceberg_commits).toMatchObject([{ operation: 'overwrite' }]);
    expect((await run('2024-02-04', true)).iceberg_commits).toMatchObject([{ operation: 'overwrite' }]);
    const current = (await readCurrentVersion(store, TABLE))!;
    expect(current.version).toBe(4);
    snaps = current.meta.snapshots;
    for (const s of snaps) {
      rowsOf.set(s['snapshot-id'], sortedRows(await icebirdRows(store, TABLE, undefined, s['snapshot-id'])));
      names.set(s['snapshot-id'], await namedBy(store, s));
    }
    expect(rowsOf.get(snaps[0]!['snapshot-id'])).toEqual(sortedRows(truthFirst));
    for (const s of snaps.slice(1)) expect(rowsOf.get(s['snapshot-id'])).toEqual(sortedRows(truthAll));
  });

  it('the default retention keeps snapshots 6 days old: nothing expires, nothing is written', async () => {
    const before = await listing(store);
    const report = await expire(snaps[0]!['timestamp-ms'] + 6 * DAY);
    expect(report.tables).toEqual([
      {
        table: TABLE,
        metadata_key: null,
        expired_snapshots: [],
        kept_snapshots: 4,
        deleted: { data_files: [], manifests: [], manifest_lists: [], summary_files: [], metadata_files: [] },
      },
    ]);
    expect(await listing(store)).toEqual(before);
  });

  it('a dry run names the snapshots and files that would go, and writes and deletes nothing', async () => {
    const before = await listing(store);
    const report = await expire(snaps[2]!['timestamp-ms'] + 7 * DAY - 1, true);
    expect(report.dry_run).toBe(true);
    expect(report.tables[0]!.expired_snapshots).toEqual([snaps[0]!['snapshot-id'], snaps[1]!['snapshot-id']]);
    expect(report.tables[0]!.deleted.data_files.length).toBeGreaterThan(0);
    expect(await listing(store)).toEqual(before);
    expect((await readCurrentVersion(store, TABLE))!.version).toBe(4);
  });

  it('snapshots older than the retention leave the metadata and the files only they named are deleted; the rest reads as before', async () => {
    const [s1, s2, s3, s4] = snaps as [Snapshot, Snapshot, Snapshot, Snapshot];
    const before = await listing(store);
    const live = await stateFiles(store);
    const kept = new Set([...names.get(s3['snapshot-id'])!, ...names.get(s4['snapshot-id'])!, ...live]);
    const onlyExpired = [...new Set([...names.get(s1['snapshot-id'])!, ...names.get(s2['snapshot-id'])!])].filter((k) => !kept.has(k));
    const oldMetadata = [`${TABLE}/metadata/v1.metadata.json`, `${TABLE}/metadata/v2.metadata.json`];
    // The --force runs replaced every data file of snapshots 1 and 2: those files go with them.
    expect(onlyExpired.filter((k) => k.endsWith('.iceberg.parquet')).length).toBeGreaterThan(0);

    const report = await expire(s3['timestamp-ms'] + 7 * DAY - 1);
    expect(report.tables[0]).toMatchObject({
      metadata_key: `${TABLE}/metadata/v5.metadata.json`,
      expired_snapshots: [s1['snapshot-id'], s2['snapshot-id']],
      kept_snapshots: 2,
    });
    const current = (await readCurrentVersion(store, TABLE))!;
    expect(current.version).toBe(5);
    const ids = (list: { 'snapshot-id': number }[]) => list.map((s) => s['snapshot-id']);
    expect(ids(current.meta.snapshots)).toEqual([s3['snapshot-id'], s4['snapshot-id']]);
    expect(current.meta['current-snapshot-id']).toBe(s4['snapshot-id']);
    expect(ids(current.meta['snapshot-log'])).toEqual([s3['snapshot-id'], s4['snapshot-id']]);
    expect(current.meta.refs).toEqual({ main: { 'snapshot-id': s4['snapshot-id'], type: 'branch' } });
    const root = destinationUri(store);
    expect(current.meta['metadata-log'].map((m) => m['metadata-file'])).toEqual([
      `${root}/${TABLE}/metadata/v3.metadata.json`,
      `${root}/${TABLE}/metadata/v4.metadata.json`,
    ]);

    // Exactly the files only the expired snapshots named, and the dropped metadata files, are gone.
    const after = await listing(store);
    const expected = [...before.keys()].filter((k) => !onlyExpired.includes(k) && !oldMetadata.includes(k));
    expect([...after.keys()].sort()).toEqual([...expected, `${TABLE}/metadata/v5.metadata.json`].sort());
    for (const k of live) expect(after.has(k), k).toBe(true);
    expect((await store.get(`${TABLE}/metadata/version-hint.text`))!.body.toString()).toBe('5');

    expect(sortedRows(await icebirdRows(store, TABLE))).toEqual(sortedRows(truthAll));
    for (const s of [s3, s4])
      expect(sortedRows(await icebirdRows(store, TABLE, undefined, s['snapshot-id']))).toEqual(rowsOf.get(s['snapshot-id']));
    expect(sortedRows(await icebirdRows(store, TABLE, 'v3.metadata.json'))).toEqual(rowsOf.get(s3['snapshot-id']));

    const { code, report: verified } = await verify();
    expect(verified.problems).toEqual([]);
    expect(code).toBe(0);
  });

  it('under the default retention a snapshot 8 days old expires, the current one never', async () => {
    const s3 = snaps[2]!;
    const s4 = snaps[3]!;
    const live = await stateFiles(store);
    const onlyS3 = names.get(s3['snapshot-id'])!.filter((k) => !names.get(s4['snapshot-id'])!.includes(k) && !live.includes(k));
    expect(onlyS3.length).toBeGreaterThan(0);
    const report = await expire(s4['timestamp-ms'] + 8 * DAY);
    expect(report.tables[0]).toMatchObject({ expired_snapshots: [s3['snapshot-id']], kept_snapshots: 1 });
    const current = (await readCurrentVersion(store, TABLE))!;
    expect(current.meta.snapshots.map((s) => s['snapshot-id'])).toEqual([s4['snapshot-id']]);
    for (const k of onlyS3) expect(await store.head(k), k).toBeNull();
    for (const k of [...names.get(s4['snapshot-id'])!, ...live]) expect(await store.head(k), k).not.toBeNull();
    expect(sortedRows(await icebirdRows(store, TABLE))).toEqual(sortedRows(truthAll));

    // Only the current snapshot is left: a later expiry never takes it.
    expect((await expire(s4['timestamp-ms'] + 30 * DAY)).tables[0]!.expired_snapshots).toEqual([]);
    const { code, report: verified } = await verify();
    expect(verified.problems).toEqual([]);
    expect(code).toBe(0);
  });
});

describe('a table behind its state', () => {
  it('keeps a data file the state lists even when only expired snapshots name it, and the next commit reads whole', async () => {
    const dir = join(tmp.dir, 'behind');
    const out = join(dir, 'out');
    const store = new LocalStore(out);
    const run = (force: boolean) =>
      exportJob({ job: job('2024-02-02'), dir, sandbox, destination: out, flags: { format: 'iceberg' }, force });
    expect((await run(false)).status).toBe('succeeded');
    const first = await stateFiles(store);
    cpSync(join(out, '_state'), join(dir, 'state-of-run-1'), { recursive: true });
    expect((await run(true)).iceberg_commits).toMatchObject([{ operation: 'overwrite' }]);
    // The state as a backup of run 1's restores it: its files are live again, the current snapshot does not name them.
    rmSync(join(out, '_state'), { recursive: true });
    cpSync(join(dir, 'state-of-run-1'), join(out, '_state'), { recursive: true });

    const [s1, s2] = (await readCurrentVersion(store, TABLE))!.meta.snapshots as [Snapshot, Snapshot];
    const report = await expireSnapshots({
      store,
      state: new WindowState(store, 'expire'),
      tables: [TABLE],
      retentionMs: defaultRetentionMs(),
      now: () => s2['timestamp-ms'] + 8 * DAY,
      logger: silentLogger,
    });
    expect(report.tables[0]!.expired_snapshots).toEqual([s1['snapshot-id']]);
    expect(report.tables[0]!.deleted.manifest_lists).toEqual([decodeURI(s1['manifest-list'].slice(destinationUri(store).length + 1))]);
    for (const k of first) expect(await store.head(k), k).not.toBeNull();

    // The next run commits the state's files again: nothing of them was lost.
    expect((await run(false)).iceberg_commits).toMatchObject([{ operation: 'overwrite' }]);
    expect(sortedRows(await icebirdRows(store, TABLE))).toEqual(sortedRows(truthFirst));
  });
});
