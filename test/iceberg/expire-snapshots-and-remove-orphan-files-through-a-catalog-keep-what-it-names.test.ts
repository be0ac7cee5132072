/**
 * Issue 44 item 1: expire-snapshots and remove-orphan-files on tables committed through a REST
 * catalog (the sandbox's, every request and answer checked against the spec). The table is the
 * one the catalog serves: an expiry is its commit of remove-snapshots (with assert-table-uuid and
 * the refs' requirements), never a metadata file written beside it; neither command deletes a
 * file the catalog's current metadata or the state names (the catalog's metadata files included).
 * A crash between the catalog's commit and the deletes leaves a table every reader reads, and a
 * rerun (expire-snapshots, then remove-orphan-files) finishes; a commit applied but answered 502
 * is decided from the table re-loaded. A table the catalog does not have keeps every file.
 */
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { IcebergRestCatalog } from 'iceberg-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { expireSnapshots, type TableExpiry } from '../../src/iceberg/expire-snapshots.js';
import { RestCatalogClient } from '../../src/iceberg/catalog/index.js';
import type { TableCatalog } from '../../src/iceberg/catalog-commit.js';
import { readManifests } from '../../src/iceberg/commit-table.js';
import { destinationUri } from '../../src/iceberg/index.js';
import { removeOrphanFiles } from '../../src/iceberg/remove-orphan-files.js';
import type { Snapshot } from '../../src/iceberg/table-metadata.js';
import { silentLogger } from '../../src/log.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import { anotherWriterCommitsOnFirstLoad, commitAnswered, useCatalogSandbox } from '../helpers/catalog-sandbox.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { DAY, defaultRetentionMs, parquetRows, TABLE, walletJob } from '../helpers/iceberg-history.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useTempDir } from '../helpers/temp-dir.js';

const c = useCatalogSandbox();
const sandbox = c.sandbox;
const tmp = useTempDir('iceberg-catalog-maint-');
const JOB = 'catmaint';
const job = walletJob(JOB, '2024-02-04');
const dir = () => join(tmp.dir, 'job');
const out = () => join(dir(), 'out');
const store = () => new LocalStore(out());
const catalog = (): TableCatalog => ({
  client: new RestCatalogClient({ uri: sandbox.catalog.url, auth: { kind: 'none' } }),
  namespace: [JOB],
});
const js = () => new IcebergRestCatalog({ baseUrl: sandbox.catalog.url, auth: { type: 'none' } });
const loadJs = () => js().loadTable({ namespace: [JOB], name: TABLE });

const run = async (to: string, force = false) => {
  const r = await exportJob({
    job: walletJob(JOB, to),
    dir: dir(),
    sandbox,
    destination: out(),
    flags: { format: 'iceberg', catalogUri: sandbox.catalog.url },
    force,
  });
  expect(r.status).toBe('succeeded');
  return r;
};

const history = (now: number, guard?: () => void) => ({
  store: store(),
  state: new WindowState(store(), JOB),
  tables: [TABLE],
  retentionMs: defaultRetentionMs(),
  now: () => now,
  logger: silentLogger,
  guard,
  catalog: catalog(),
});

async function keys(): Promise<Set<string>> {
  const all = new Set<string>();
  for await (const o of store().list('', { etags: false })) if (!o.key.startsWith('_state/')) all.add(o.key);
  return all;
}

/** Every key the catalog's current metadata of the table names: its metadata files and what each snapshot reads. */
async function namedByCatalog(): Promise<string[]> {
  const root = destinationUri(store());
  const key = (uri: string) => decodeURI(uri.slice(root.length + 1));
  const loaded = await catalog().client.loadTable({ namespace: [JOB], name: TABLE });
  const meta = loaded.metadata;
  const out = [key(loaded.metadataLocation), ...(meta['metadata-log'] ?? []).map((m) => key(m['metadata-file']))];
  for (const s of (meta.snapshots ?? []) as unknown as Snapshot[]) {
    const manifests = await readManifests(store(), root, s);
    out.push(key(s['manifest-list']), ...manifests.map((m) => key(m.file.manifest_path)));
    out.push(...manifests.flatMap((m) => m.entries.filter((e) => e.status !== 2).map((e) => key(e.data_file.file_path))));
  }
  return out;
}

async function stateFiles(): Promise<string[]> {
  const files: string[] = [];
  for await (const rec of new WindowState(store(), JOB).completedRecords()) files.push(...rec.files.map((f) => f.key));
  return files;
}

/** The table as icebird reads it at the metadata location the catalog serves now. */
async function rowsAtCatalog(): Promise<string[]> {
  const loaded = await catalog().client.loadTable({ namespace: [JOB], name: TABLE });
  return sortedRows(await icebirdRows(store(), TABLE, basename(loaded.metadataLocation)));
}

let truth: string[];
let snaps: Snapshot[];

beforeAll(async () => {
  truth = sortedRows(await parquetRows(job, join(tmp.dir, 'truth'), sandbox));
  await run('2024-02-02');
  await run('2024-02-04');
  await run('2024-02-04', true);
  snaps = (await loadJs()).snapshots as unknown as Snapshot[];
  expect(snaps.map((s) => s.summary.operation)).toEqual(['append', 'append', 'overwrite']);
});

describe('tables committed through a catalog', () => {
  it('remove-orphan-files keeps every file the catalog names (its metadata files included) and removes an orphan', async () => {
    const orphan = `${TABLE}/metadata/orphan-${Date.now()}-m0.avro`;
    writeFileSync(join(out(), orphan), 'left by a crashed commit');
    // A catalog metadata file newer than the one loaded: another writer's commit since.
    const newer = `${TABLE}/metadata/99999-newer.metadata.json`;
    writeFileSync(join(out(), newer), '{}');
    const named = [...(await namedByCatalog()), ...(await stateFiles())];
    expect(named.filter((k) => k.endsWith('.metadata.json')).length).toBe(4);

    const report = await removeOrphanFiles(history(Date.now() + 30 * DAY));
    expect(report.tables[0]!.deleted).toEqual([orphan]);
    const after = await keys();
    for (const k of [...named, newer]) expect(after.has(k), k).toBe(true);
    expect(await rowsAtCatalog()).toEqual(truth);
  });

  it('expire-snapshots commits remove-snapshots through the catalog and deletes only what the expired snapshots alone named', async () => {
    const [s1, s2, s3] = snaps as [Snapshot, Snapshot, Snapshot];
    const before = await keys();
    const report = await expireSnapshots(history(s3['timestamp-ms'] + 7 * DAY - 1));
    const t = report.tables[0]!;
    expect(t.expired_snapshots).toEqual([s1['snapshot-id'], s2['snapshot-id']]);
    expect(t.deleted.data_files.length).toBeGreaterThan(0);
    expect(t.deleted.metadata_files).toEqual([]);

    const loaded = await loadJs();
    expect(loaded.snapshots!.map((s) => s['snapshot-id'])).toEqual([s3['snapshot-id']]);
    expect(loaded['current-snapshot-id']).toBe(s3['snapshot-id']);
    const location = (await catalog().client.loadTable({ namespace: [JOB], name: TABLE })).metadataLocation;
    expect(t.catalog).toEqual({ namespace: JOB, metadata_location: location, conflicts: 0, unknown_answers: 0 });
    const commit = c.exchanges.find((e) => e.method === 'POST' && e.path.endsWith(`/tables/${TABLE}`))!;
    expect(commit.request).toMatchObject({
      requirements: [{ type: 'assert-table-uuid' }, { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': s3['snapshot-id'] }],
      updates: [{ action: 'remove-snapshots', 'snapshot-ids': [s1['snapshot-id'], s2['snapshot-id']] }],
    });

    const after = await keys();
    // No metadata file of our own beside the catalog's; nothing the catalog or the state names is gone.
    expect([...after].filter((k) => /\/v\d+\.metadata\.json$/.test(k))).toEqual([]);
    for (const k of [...(await namedByCatalog()), ...(await stateFiles())]) expect(after.has(k), k).toBe(true);
    const deleted = Object.values(t.deleted).flat();
    expect([...before].filter((k) => !after.has(k)).sort()).toEqual(deleted.sort());
    expect(await rowsAtCatalog()).toEqual(truth);
  });

  it('a crash between the catalog commit and the deletes leaves a readable table; a rerun and remove-orphan-files finish', async () => {
    await run('2024-02-04', true);
    const [s3, s4] = (await loadJs()).snapshots as unknown as [Snapshot, Snapshot];
    let guards = 0;
    const crash = () => {
      if (++guards === 2) throw new Error('crash before the deletes');
    };
    await expect(expireSnapshots(history(s4['timestamp-ms'] + 7 * DAY - 1, crash))).rejects.toThrow('crash before the deletes');
    expect((await loadJs()).snapshots!.map((s) => s['snapshot-id'])).toEqual([s4['snapshot-id']]);
    expect(await rowsAtCatalog()).toEqual(truth);

    const rerun = await expireSnapshots(history(s4['timestamp-ms'] + 7 * DAY - 1));
    expect(rerun.tables[0]).toMatchObject({ expired_snapshots: [], metadata_key: null });
    const orphans = await removeOrphanFiles(history(Date.now() + 30 * DAY));
    // s3's manifest list and its data files, left by the crash, are orphans now.
    expect(orphans.tables[0]!.deleted).toContain(decodeURI(s3['manifest-list'].slice(destinationUri(store()).length + 1)));
    const after = await keys();
    for (const k of [...(await namedByCatalog()), ...(await stateFiles())]) expect(after.has(k), k).toBe(true);
    expect(await rowsAtCatalog()).toEqual(truth);
  });

  it('an expiry the catalog applied but answered 502 is decided from the table re-loaded: the files go once', async () => {
    await run('2024-02-04', true);
    const [s4, s5] = (await loadJs()).snapshots as unknown as [Snapshot, Snapshot];
    sandbox.catalog.set({ commitFaults: [502] });
    const report = await expireSnapshots(history(s5['timestamp-ms'] + 7 * DAY - 1));
    expect(c.exchanges.some((e) => e.method === 'POST' && e.status === 502)).toBe(true);
    expect(report.tables[0]!.expired_snapshots).toEqual([s4['snapshot-id']]);
    // The report names the answer lost on the way, as a run's iceberg_commits[].catalog does.
    expect(report.tables[0]!.catalog).toMatchObject({ conflicts: 0, unknown_answers: 1 });
    expect(report.tables[0]!.deleted.data_files.length).toBeGreaterThan(0);
    expect((await loadJs()).snapshots!.map((s) => s['snapshot-id'])).toEqual([s5['snapshot-id']]);
    const after = await keys();
    for (const k of [...(await namedByCatalog()), ...(await stateFiles())]) expect(after.has(k), k).toBe(true);
    expect(await rowsAtCatalog()).toEqual(truth);
  });

  it('the commands read the catalog the job names: a namespace without the table keeps every file (CLI)', async () => {
    const r = await runCli([
      'remove-orphan-files',
      join(dir(), 'job.yaml'),
      '--destination',
      out(),
      '--format',
      'iceberg',
      '--catalog-uri',
      sandbox.catalog.url,
      '--catalog-namespace',
      'elsewhere',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { tables: { not_in_catalog?: boolean; deleted: string[]; listed: number }[] };
    expect(report.tables[0]).toMatchObject({ not_in_catalog: true, deleted: [] });
    expect(report.tables[0]!.listed).toBeGreaterThan(0);
  });

  it("expire-snapshots --json names each table's expiry commit: snapshots removed, metadata location, the 409 retried (CLI)", async () => {
    await run('2024-02-04', true);
    const expired = (await loadJs()).snapshots!.slice(0, -1).map((s) => s['snapshot-id']);
    // Another writer commits between the expiry's load of the table and its commit: 409, then the expiry retried.
    const restore = anotherWriterCommitsOnFirstLoad(c, { namespace: JOB, table: TABLE, snapshotId: 4545 });
    const argv = ['expire-snapshots', join(dir(), 'job.yaml'), '--destination', out(), '--format', 'iceberg'];
    const flags = ['--catalog-uri', sandbox.catalog.url, '--snapshot-retention', '1ms', '--log-level', 'error'];
    const r = await runCli([...argv, ...flags, '--json']);
    restore();
    expect(r.code, r.stderr).toBe(0);
    expect(commitAnswered(c, JOB, TABLE, 409)).toBe(true);
    const t = (JSON.parse(r.stdout) as { tables: TableExpiry[] }).tables[0]!;
    const served = await catalog().client.loadTable({ namespace: [JOB], name: TABLE });
    // The retry expired every snapshot but the other writer's, now current; the catalog serves the location the report names.
    expect(served.metadata.snapshots!.map((s) => s['snapshot-id'])).toEqual([4545]);
    expect(t.expired_snapshots.sort()).toEqual([...expired, served.metadata.snapshots![0]!['parent-snapshot-id']].sort());
    expect(t.catalog).toEqual({ namespace: JOB, metadata_location: served.metadataLocation, conflicts: 1, unknown_answers: 0 });
    // The text summary names the commit too.
    await run('2024-02-04', true);
    const text = await runCli([...argv, ...flags]);
    const location = (await catalog().client.loadTable({ namespace: [JOB], name: TABLE })).metadataLocation;
    expect(text.stdout).toContain(
      `${TABLE}: 1 snapshots expired, 1 kept (through the catalog: ${location}; 0 conflicts retried, 0 answers lost or 5xx)`,
    );
  });
});
