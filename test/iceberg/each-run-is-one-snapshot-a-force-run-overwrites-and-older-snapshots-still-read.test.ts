/**
 * Issue 34: the table is a projection of the state, one snapshot per run that changes it. A run
 * that adds windows appends a snapshot and the previous one still reads as it was; a --force run
 * makes one overwrite snapshot after which the table equals a fresh export, and the replaced
 * snapshot's files are still there (a reader of it never meets a missing file). Local and S3.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCurrentVersion, readSnapshotManifests, destinationUri } from '../../src/iceberg/index.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { exportJob, readTable, type CanonRow } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 35, transactions: 6_000 });
const bucket = useTestBucket('iceberg-snapshots');
const s3Env = useS3CredentialsInEnv();
const tmp = useTempDir('iceberg-snapshots-');

const job = (to: string) => ({
  name: 'snaps',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to, chunk: '1d' },
});

let truthFirst: CanonRow[];
let truthAll: CanonRow[];

beforeAll(async () => {
  for (const [name, to] of [
    ['first', '2024-02-03'],
    ['all', '2024-02-05'],
  ] as const) {
    const dir = join(tmp.dir, `truth-${name}`);
    const r = await exportJob({ job: job(to), dir, sandbox, destination: join(dir, 'out'), flags: { format: 'parquet' } });
    expect(r.status).toBe('succeeded');
    const rows = await readTable(join(dir, 'out'), 'transactions', 'parquet');
    if (name === 'first') truthFirst = rows;
    else truthAll = rows;
  }
  expect(truthAll.length).toBeGreaterThan(truthFirst.length);
});

describe.each(['local', 's3'] as const)('a %s destination', (kind) => {
  const prefix = 'snapshots';
  let dir: string;
  let store: ObjectStore;
  const run = (to: string, force = false) =>
    exportJob({
      job: job(to),
      dir,
      sandbox,
      destination: kind === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`,
      env: kind === 's3' ? s3Env : {},
      flags: { format: 'iceberg' },
      force,
    });

  beforeAll(() => {
    dir = join(tmp.dir, kind);
    store = kind === 'local' ? new LocalStore(join(dir, 'out')) : bucket.store(prefix);
  });

  it('the first run appends snapshot 1', async () => {
    const report = await run('2024-02-03');
    expect(report.status).toBe('succeeded');
    expect(report.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'append', deleted_files: 0 }]);
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(sortedRows(truthFirst));
  });

  it('a run that adds windows appends snapshot 2 on top of 1, and snapshot 1 still reads as it was', async () => {
    const report = await run('2024-02-05');
    expect(report.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'append', deleted_files: 0 }]);
    const current = (await readCurrentVersion(store, 'transactions'))!;
    expect(current.version).toBe(2);
    const [s1, s2] = current.meta.snapshots;
    expect(s2).toMatchObject({ 'parent-snapshot-id': s1!['snapshot-id'], 'sequence-number': 2 });
    expect(current.meta['metadata-log']).toEqual([
      { 'metadata-file': `${destinationUri(store)}/transactions/metadata/v1.metadata.json`, 'timestamp-ms': expect.any(Number) },
    ]);
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(sortedRows(truthAll));
    expect(sortedRows(await icebirdRows(store, 'transactions', 'v1.metadata.json'))).toEqual(sortedRows(truthFirst));
  });

  it('a run with nothing new commits nothing', async () => {
    const report = await run('2024-02-05');
    expect(report.iceberg_commits).toEqual([]);
    expect((await readCurrentVersion(store, 'transactions'))!.version).toBe(2);
  });

  it('--force makes one overwrite snapshot: the table equals a fresh export, snapshot 2 keeps its files and still reads', async () => {
    const before = (await readCurrentVersion(store, 'transactions'))!;
    const oldFiles = (await readSnapshotManifests(store, destinationUri(store), before.meta)).flatMap((m) =>
      m.entries.map((e) => e.data_file.file_path),
    );
    const report = await run('2024-02-05', true);
    expect(report.status).toBe('succeeded');
    expect(report.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'overwrite', deleted_files: oldFiles.length }]);
    const after = (await readCurrentVersion(store, 'transactions'))!;
    expect(after.version).toBe(3);
    const manifests = await readSnapshotManifests(store, destinationUri(store), after.meta);
    const live = manifests.flatMap((m) => m.entries.filter((e) => e.status !== 2).map((e) => e.data_file.file_path));
    expect(live.filter((p) => oldFiles.includes(p))).toEqual([]);
    const deleted = manifests.flatMap((m) => m.entries.filter((e) => e.status === 2).map((e) => e.data_file.file_path));
    expect(deleted.sort()).toEqual([...oldFiles].sort());
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(sortedRows(truthAll));
    const root = destinationUri(store);
    for (const path of oldFiles) expect(await store.head(decodeURI(path.slice(root.length + 1))), path).not.toBeNull();
    expect(sortedRows(await icebirdRows(store, 'transactions', 'v2.metadata.json'))).toEqual(sortedRows(truthAll));
  });
});
