/**
 * Issue 34.4: a job exported to Iceberg without decoding, then with decoding turned on over one
 * more day. The transactions table gains the decoded columns: its metadata gets a second schema, made
 * current by the run's snapshot, in which the old columns keep their field ids and the new ones
 * take the next ids; the older data files carry the old ids and the newer the new schema's (pyarrow);
 * icebird reads the older rows with nulls in the new columns and the newer rows with their values,
 * row for row what a Parquet export of each part gives; the first snapshot still reads as it was.
 * Local and S3; `verify` and `ddl` of the evolved table (local).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/log.js';
import { readManifests } from '../../src/iceberg/commit-table.js';
import { destinationUri, readCurrentVersion } from '../../src/iceberg/index.js';
import type { RunReport } from '../../src/run/report.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob, readTable, type CanonRow } from '../helpers/export.js';
import { fieldIdsWithPyarrow, icebirdRows, readWithFastavro, sortedRows } from '../helpers/iceberg.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 37, transactions: 6_000 });
const bucket = useTestBucket('iceberg-evolution');
const s3Env = useS3CredentialsInEnv();
const tmp = useTempDir('iceberg-evolution-');

const DECODED = ['decoded_function_name', 'decoded_signature', 'decoded_inputs_json', 'decode_status'];

const job = (decode: boolean, from: string, to: string) => ({
  name: 'evolve',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from, to, chunk: '1d' },
  decode,
});

/** What a Parquet export gives of each part: the first days without decoding, the next ones with it. */
let before: CanonRow[];
let after: CanonRow[];

beforeAll(async () => {
  const part = async (name: string, decode: boolean, from: string, to: string) => {
    const dir = join(tmp.dir, `parquet-${name}`);
    const r = await exportJob({ job: job(decode, from, to), dir, sandbox, destination: join(dir, 'out'), flags: { format: 'parquet' } });
    expect(r.status).toBe('succeeded');
    return readTable(join(dir, 'out'), 'transactions', 'parquet');
  };
  before = await part('before', false, '2024-02-01', '2024-02-03');
  after = await part('after', true, '2024-02-03', '2024-02-04');
  expect(before.length).toBeGreaterThan(20);
  expect(after.length).toBeGreaterThan(20);
  expect(Object.keys(before[0]!)).not.toContain('decode_status');
  expect(Object.keys(after[0]!)).toEqual(expect.arrayContaining(DECODED));
});

/** Copies of objects in a local folder, for the Python readers (by key). */
async function localCopies(store: ObjectStore, keys: readonly string[], scratch: string): Promise<Map<string, string>> {
  mkdirSync(scratch, { recursive: true });
  const paths = new Map<string, string>();
  for (const [i, key] of keys.entries()) {
    const path = join(scratch, `${i}-${key.split('/').pop()}`);
    writeFileSync(path, (await store.get(key))!.body);
    paths.set(key, path);
  }
  return paths;
}

describe.each(['local', 's3'] as const)('a %s Iceberg table whose job turns decoding on', (kind) => {
  let dir: string;
  let store: ObjectStore;
  let first: RunReport;
  let second: RunReport;
  const logLines: { msg: string; table?: string; schema_id?: number; added_columns?: unknown[] }[] = [];

  beforeAll(async () => {
    dir = join(tmp.dir, kind);
    const prefix = 'evolution';
    store = kind === 'local' ? new LocalStore(join(dir, 'out')) : bucket.store(prefix);
    const run = (decode: boolean, to: string, logger?: Logger) =>
      exportJob({
        ...(logger ? { logger } : {}),
        job: job(decode, '2024-02-01', to),
        dir,
        sandbox,
        destination: kind === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`,
        env: kind === 's3' ? s3Env : {},
        flags: { format: 'iceberg' },
      });
    first = await run(false, '2024-02-03');
    second = await run(
      true,
      '2024-02-04',
      pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _e, cb) => (logLines.push(JSON.parse(chunk.toString())), cb()) })),
    );
    expect(first.status).toBe('succeeded');
    expect(second.status).toBe('succeeded');
  });

  it('gets a second schema: the old fields keep their ids, the decoded columns take the next ones', async () => {
    const { meta, version } = (await readCurrentVersion(store, 'transactions'))!;
    expect(version).toBe(2);
    const [s0, s1] = meta.schemas;
    expect(meta.schemas).toHaveLength(2);
    const n = s0!.fields.length;
    expect(s0!.fields.map((f) => f.id)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(s0!.fields.map((f) => f.name)).not.toContain('decode_status');
    expect(s1!['schema-id']).toBe(1);
    expect(s1!.fields.slice(0, n)).toEqual(s0!.fields);
    expect(s1!.fields.slice(n).map((f) => [f.name, f.id])).toEqual(DECODED.map((name, i) => [name, n + 1 + i]));
    expect(meta['current-schema-id']).toBe(1);
    expect(meta['last-column-id']).toBe(n + DECODED.length);
    expect(meta.snapshots.map((s) => s['schema-id'])).toEqual([0, 1]);
    expect(second.iceberg_commits).toMatchObject([
      {
        table: 'transactions',
        operation: 'append',
        schema_evolved: { schema_id: 1, added_columns: DECODED, promoted_columns: [] },
      },
    ]);
    expect(first.iceberg_commits?.[0]).not.toHaveProperty('schema_evolved');
    // The log says it twice: when the run fixes the new columns' ids (before its first file), and when its commit evolves the table.
    expect(logLines.find((l) => l.msg.startsWith('Iceberg table columns evolve'))).toMatchObject({
      table: 'transactions',
      added_columns: DECODED.map((name, i) => ({ name, field_id: n + 1 + i })),
    });
    expect(logLines.find((l) => l.msg.startsWith('Iceberg table schema evolved'))).toMatchObject({
      table: 'transactions',
      schema_id: 1,
      added_columns: DECODED,
    });
  });

  it('pyarrow finds the ids of the schema they were written with in the older and the newer data files', async () => {
    const { meta } = (await readCurrentVersion(store, 'transactions'))!;
    const rootUri = destinationUri(store);
    const keysOf = async (i: number) =>
      (await readManifests(store, rootUri, meta.snapshots[i]!))
        .flatMap((m) => m.entries)
        .filter((e) => e.snapshot_id === meta.snapshots[i]!['snapshot-id'])
        .map((e) => decodeURI(e.data_file.file_path.slice(rootUri.length + 1)));
    const older = await keysOf(0);
    const newer = await keysOf(1);
    expect(older.length).toBeGreaterThan(1);
    expect(newer.length).toBeGreaterThan(1);
    const ids = (i: number) => Object.fromEntries(meta.schemas[i]!.fields.map((f) => [f.name, f.id]));
    const paths = await localCopies(store, [...older, ...newer], join(dir, 'pyarrow'));
    const found = fieldIdsWithPyarrow([...paths.values()]);
    for (const key of older) expect(found[paths.get(key)!], key).toEqual(ids(0));
    for (const key of newer) expect(found[paths.get(key)!], key).toEqual(ids(1));
  });

  it('icebird reads null in the decoded columns of the older rows and their values in the newer ones, as Parquet exports of each part', async () => {
    const rows = await icebirdRows(store, 'transactions');
    const nulls = Object.fromEntries(DECODED.map((c) => [c, null]));
    expect(sortedRows(rows)).toEqual(sortedRows([...before.map((r) => ({ ...r, ...nulls })), ...after]));
    expect(rows.filter((r) => r.decode_status !== null)).toHaveLength(after.length);
  });

  it('the first snapshot still reads as it was, under its own schema', async () => {
    const rows = await icebirdRows(store, 'transactions', 'v1.metadata.json');
    expect(sortedRows(rows)).toEqual(sortedRows(before));
  });

  it('the manifest of the added files carries the new schema (fastavro)', async () => {
    const { meta } = (await readCurrentVersion(store, 'transactions'))!;
    const rootUri = destinationUri(store);
    const key = (uri: string) => decodeURI(uri.slice(rootUri.length + 1));
    const snapshot = meta.snapshots[1]!;
    const listKey = key(snapshot['manifest-list']);
    const [listPath] = (await localCopies(store, [listKey], join(dir, 'avro-list'))).values();
    const list = readWithFastavro([listPath!])[listPath!]!;
    const added = list.records.find((m) => m.added_snapshot_id === snapshot['snapshot-id'])!;
    const [manifestPath] = (await localCopies(store, [key(added.manifest_path as string)], join(dir, 'avro-manifest'))).values();
    const manifest = readWithFastavro([manifestPath!])[manifestPath!]!;
    expect(JSON.parse(manifest.metadata.schema!)).toEqual(meta.schemas[1]);
    expect(manifest.metadata['schema-id']).toBe('1');
  });
});

describe('verify and ddl of the local table after its schema evolved', () => {
  const cli = (...argv: string[]) =>
    runCli([...argv, '--destination', join(tmp.dir, 'local', 'out'), '--base-url', sandbox.url, '--format', 'iceberg']);

  it('verify finds the table equal to the state, every file of both schemas present', async () => {
    const r = await cli('verify', join(tmp.dir, 'local', 'job.yaml'), '--json');
    expect((JSON.parse(r.stdout) as VerifyReport).problems).toEqual([]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('ddl opens the table by the metadata file of the evolved schema', async () => {
    const r = await cli('ddl', join(tmp.dir, 'local', 'job.yaml'), '--dialect', 'duckdb');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`iceberg_scan('${join(tmp.dir, 'local', 'out')}/transactions/metadata/v2.metadata.json')`);
  });
});
