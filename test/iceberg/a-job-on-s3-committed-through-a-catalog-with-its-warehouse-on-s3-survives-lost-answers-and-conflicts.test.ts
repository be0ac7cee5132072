/**
 * Issue 44, on S3 (radosgw): the sandbox catalog keeps its metadata files on S3, under each
 * table's location (its writeObject knob, given the test bucket's client), and a run with an S3
 * destination commits through it. A commit the catalog applied but answered 502 ("state unknown")
 * leaves exactly one snapshot, reported as committed; a 409 from another writer's commit is
 * re-read and retried on top of it. icebird reads each table from S3 at the metadata location the
 * catalog returned, row for row a fresh Parquet export; every exchange validates against the spec.
 */
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { anotherWriterCommitsOnFirstLoad, commitAnswered, icebergJs } from '../helpers/catalog-sandbox.js';
import { useS3CatalogSandbox } from '../helpers/catalog-on-s3.js';
import { exportJob } from '../helpers/export.js';
import { freshExportRows, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useTempDir } from '../helpers/temp-dir.js';

const c = useS3CatalogSandbox('catalog-s3');
const { sandbox, bucket, s3Env } = c;
const tmp = useTempDir('iceberg-catalog-s3-');
const TABLE = 'transactions';
const PREFIX = 'cats3';

const job = (to: string) => ({
  name: 'cats3',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to, chunk: '1d' },
});

const truth: Record<string, string[]> = {};
beforeAll(async () => {
  for (const to of ['2024-02-03', '2024-02-05']) {
    truth[to] = (await freshExportRows({ job: job(to), dir: join(tmp.dir, `truth-${to}`), sandbox }, [TABLE]))[TABLE]!;
  }
  expect(truth['2024-02-05']!.length).toBeGreaterThan(truth['2024-02-03']!.length);
});

const js = () => icebergJs(sandbox);

async function run(to: string): Promise<RunReport> {
  const dir = join(tmp.dir, `run-${to}`);
  const flags = { format: 'iceberg' as const, catalogUri: sandbox.catalog.url };
  const r = await exportJob({ job: job(to), dir, sandbox, destination: `s3://${bucket.bucket}/${PREFIX}`, flags, env: s3Env });
  expect(r.status).toBe('succeeded');
  return r;
}

/** The table read from S3 at the metadata location the catalog serves now. */
async function expectCatalogTableEquals(rows: string[]): Promise<void> {
  const location = (await c.call('GET', `/v1/namespaces/cats3/tables/${TABLE}`)).body['metadata-location'] as string;
  expect(location).toMatch(new RegExp(`^s3://${bucket.bucket}/${PREFIX}/${TABLE}/metadata/\\d{5}-[0-9a-f-]+\\.metadata\\.json$`));
  const read = await icebirdRows(bucket.store(PREFIX), TABLE, location.split('/').at(-1));
  expect(sortedRows(read)).toEqual(rows);
}

it('keeps metadata on S3; a commit applied but answered 502, then a 409 from another writer, each leave the table whole', async () => {
  // State unknown: the first commit is applied and answered 502.
  sandbox.catalog.set({ commitFaults: [502] });
  const first = await run('2024-02-03');
  const id = { namespace: ['cats3'], name: TABLE };
  let loaded = await js().loadTable(id);
  expect(first.iceberg_commits!.map((x) => x.snapshot_id)).toEqual([loaded['current-snapshot-id']]);
  expect(loaded.snapshots).toHaveLength(1);
  expect(commitAnswered(c, 'cats3', TABLE, 502)).toBe(true);
  await expectCatalogTableEquals(truth['2024-02-03']!);

  // A conflict: another writer commits between the run's load of the table (the one GET of its first commit attempt) and its commit.
  const restore = anotherWriterCommitsOnFirstLoad(c, { namespace: 'cats3', table: TABLE, snapshotId: 4343 });
  const second = await run('2024-02-05');
  restore();
  expect(commitAnswered(c, 'cats3', TABLE, 409)).toBe(true);
  loaded = await js().loadTable(id);
  const committed = second.iceberg_commits!.find((x) => x.table === TABLE)!;
  expect(loaded['current-snapshot-id']).toBe(committed.snapshot_id);
  expect(loaded.snapshots!.map((s) => s['snapshot-id'])).toEqual([first.iceberg_commits![0]!.snapshot_id, 4343, committed.snapshot_id]);
  expect(committed.catalog?.metadata_location).toBe(
    (await c.call('GET', `/v1/namespaces/cats3/tables/${TABLE}`)).body['metadata-location'],
  );
  await expectCatalogTableEquals(truth['2024-02-05']!);
});
