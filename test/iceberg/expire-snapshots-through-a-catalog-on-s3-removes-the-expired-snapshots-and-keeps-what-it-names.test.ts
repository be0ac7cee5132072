/**
 * Issue 44, on S3 (radosgw): `insight-export expire-snapshots` of a table on S3 committed through
 * the sandbox's REST catalog, its metadata files on S3 too (the catalog's writeObject given the
 * test bucket's client). The expiry is the catalog's commit of remove-snapshots: the catalog then
 * serves the current snapshot alone, at the metadata location the report names; the data files
 * only the expired snapshots named are gone from S3; every file the catalog's current metadata
 * names is still there, and icebird reads the table at that location as a fresh Parquet export.
 */
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { icebergJs } from '../helpers/catalog-sandbox.js';
import { useS3CatalogSandbox } from '../helpers/catalog-on-s3.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { TABLE, walletJob } from '../helpers/iceberg-history.js';
import { freshExportRows, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useTempDir } from '../helpers/temp-dir.js';

// The in-process CLI reads the S3 endpoint and region from the process environment.
const c = useS3CatalogSandbox('catalog-expire', { inProcessCli: true });
const { sandbox, bucket, s3Env } = c;
const tmp = useTempDir('iceberg-catalog-expire-s3-');
const JOB = 'catexpire';
const PREFIX = 'exp';
const dir = () => join(tmp.dir, 'job');
const destination = () => `s3://${bucket.bucket}/${PREFIX}`;
const js = () => icebergJs(sandbox);

async function run(to: string, force = false): Promise<void> {
  const flags = { format: 'iceberg' as const, catalogUri: sandbox.catalog.url };
  const r = await exportJob({ job: walletJob(JOB, to), dir: dir(), sandbox, destination: destination(), flags, force, env: s3Env });
  expect(r.status).toBe('succeeded');
}

async function onS3(key: string): Promise<boolean> {
  try {
    await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: `${PREFIX}/${key}` }));
    return true;
  } catch {
    return false;
  }
}

interface ExpiryReport {
  tables: {
    table: string;
    expired_snapshots: number[];
    deleted: { data_files: string[]; metadata_files: string[] };
    catalog?: { namespace: string; metadata_location: string };
  }[];
}

it('expire-snapshots commits remove-snapshots through the catalog and deletes from S3 only what the expired snapshots alone named', async () => {
  const truth = (await freshExportRows({ job: walletJob(JOB, '2024-02-03'), dir: join(tmp.dir, 'truth'), sandbox }, [TABLE]))[TABLE]!;
  await run('2024-02-02');
  await run('2024-02-03');
  await run('2024-02-03', true);
  const id = { namespace: [JOB], name: TABLE };
  const before = await js().loadTable(id);
  expect(before.snapshots!.map((s) => s.summary.operation)).toEqual(['append', 'append', 'overwrite']);
  const current = before['current-snapshot-id'];

  const argv = ['expire-snapshots', join(dir(), 'job.yaml'), '--destination', destination(), '--format', 'iceberg'];
  const r = await runCli([...argv, '--catalog-uri', sandbox.catalog.url, '--snapshot-retention', '1ms', '--json', '--log-level', 'error']);
  expect(r.code, r.stderr).toBe(0);
  const t = (JSON.parse(r.stdout) as ExpiryReport).tables.find((x) => x.table === TABLE)!;
  expect(t.expired_snapshots).toEqual(before.snapshots!.slice(0, 2).map((s) => s['snapshot-id']));
  expect(t.deleted.data_files.length).toBeGreaterThan(0);
  for (const key of t.deleted.data_files) expect(await onS3(key), key).toBe(false);

  const after = await js().loadTable(id);
  expect(after.snapshots!.map((s) => s['snapshot-id'])).toEqual([current]);
  const served = (await c.call('GET', `/v1/namespaces/${JOB}/tables/${TABLE}`)).body['metadata-location'] as string;
  expect(t.catalog).toEqual({ namespace: JOB, metadata_location: served, conflicts: 0, unknown_answers: 0 });
  expect(served).toMatch(new RegExp(`^${destination()}/${TABLE}/metadata/\\d{5}-[0-9a-f-]+\\.metadata\\.json$`));
  const commit = c.exchanges.filter((e) => e.method === 'POST' && e.path.endsWith(`/tables/${TABLE}`)).at(-1)!;
  expect(JSON.stringify(commit.request)).toContain('"remove-snapshots"');

  const rel = (uri: string) => uri.slice(`${destination()}/`.length);
  for (const key of [served, after.snapshots![0]!['manifest-list']].map(rel)) expect(await onS3(key), key).toBe(true);
  expect(sortedRows(await icebirdRows(bucket.store(PREFIX), TABLE, served.split('/').at(-1)))).toEqual(truth);
});
