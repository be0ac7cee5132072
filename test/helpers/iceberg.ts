/**
 * Reading the Iceberg tables an export wrote with independent readers: icebird (JavaScript), and
 * Python's fastavro (manifests, manifest lists) and pyarrow (data files' field ids).
 *
 * icebird fetches every object by URL; `icebirdRows` serves its requests from the destination's
 * store (local folder or S3 through the store), ranges included, so the table is read exactly as
 * its metadata addresses it (file:// or s3:// URIs).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { icebergRead, icebergMetadata } from 'icebird';
import { destinationUri } from '../../src/iceberg/index.js';
import type { ObjectStore } from '../../src/store/store.js';
import { exportJob, readTable, type CanonRow, type ExportJobInput } from './export.js';

/** icebird's address of a destination root: s3:// becomes the AWS virtual-host URL it fetches. */
function fetchedRoot(store: ObjectStore): string {
  const uri = destinationUri(store);
  const s3 = /^s3:\/\/([^/]+)(\/.*)?$/.exec(uri);
  return s3 ? `https://${s3[1]}.s3.amazonaws.com${s3[2] ?? ''}` : uri;
}

/** The stores whose `root/...` URLs the patched fetch serves, by root (reads of several tables may overlap). */
const served = new Map<string, ObjectStore[]>();
let unpatchedFetch: typeof fetch | undefined;

async function storeFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const root = [...served.keys()].filter((r) => url.startsWith(`${r}/`)).sort((x, y) => y.length - x.length)[0];
  if (root === undefined) return unpatchedFetch!(input, init);
  const obj = await served.get(root)![0]!.get(decodeURI(url.slice(root.length + 1)));
  if (!obj) return new Response('not found', { status: 404, statusText: 'Not Found' });
  const range = /bytes=(\d+)-(\d*)/.exec(new Headers(init?.headers).get('range') ?? '');
  if (init?.method === 'HEAD') return new Response(null, { status: 200, headers: { 'content-length': String(obj.body.length) } });
  if (!range) return new Response(obj.body, { status: 200 });
  const start = Number(range[1]);
  const end = range[2] === '' ? obj.body.length : Number(range[2]) + 1;
  return new Response(obj.body.subarray(start, end), { status: 206 });
}

/**
 * Runs `fn` with a fetch that reads `root/...` URLs from the store (Range requests answered with
 * 206). Calls may overlap (trials run side by side): fetch stays patched until the last one ends.
 */
async function withStoreFetch<T>(store: ObjectStore, fn: (root: string) => Promise<T>): Promise<T> {
  const root = fetchedRoot(store);
  if (served.size === 0) {
    unpatchedFetch = globalThis.fetch;
    globalThis.fetch = storeFetch as typeof fetch;
  }
  served.set(root, [...(served.get(root) ?? []), store]);
  try {
    return await fn(root);
  } finally {
    const stores = served.get(root)!;
    stores.splice(stores.indexOf(store), 1);
    if (stores.length === 0) served.delete(root);
    if (served.size === 0) globalThis.fetch = unpatchedFetch!;
  }
}

/** Canonical like test/helpers/export.ts readTable: integers and timestamps (µs) as decimal strings. */
function canon(value: unknown, type: string): string | boolean | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return type === 'date' ? value.toISOString().slice(0, 10) : String(BigInt(value.getTime()) * 1000n);
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  if (typeof value === 'boolean' || typeof value === 'string') return value;
  return JSON.stringify(value);
}

let tableMetadataSchema: ValidateFunction | undefined;

/**
 * Where a table metadata file departs from the spec's v2 table metadata (test/iceberg/fixtures:
 * the REST catalog OpenAPI's TableMetadata, with the fields format/spec.md requires in v2), as
 * `<JSON pointer> <message>` lines; empty when it validates.
 */
export function tableMetadataProblems(metadata: unknown): string[] {
  if (!tableMetadataSchema) {
    const schema = (name: string) =>
      JSON.parse(readFileSync(fileURLToPath(new URL(`../iceberg/fixtures/${name}`, import.meta.url)), 'utf8')) as object;
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    // int64 is checked (an integer a JSON reader keeps exact); the other formats appear only in the schemas of default values.
    ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
    for (const name of ['float', 'double', 'uuid', 'date', 'byte']) ajv.addFormat(name, true);
    ajv.addSchema(schema('rest-catalog-table-metadata.schema.json'));
    tableMetadataSchema = ajv.compile(schema('iceberg-v2-table-metadata.schema.json'));
  }
  if (tableMetadataSchema(metadata)) return [];
  return (tableMetadataSchema.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
}

const METADATA_FILE = /\/v\d+\.metadata\.json$/;

/** Throws naming each metadata file of the table that does not validate (tableMetadataProblems). */
async function expectValidMetadataFiles(store: ObjectStore, table: string): Promise<void> {
  const invalid: string[] = [];
  for await (const o of store.list(`${table}/metadata/`, { etags: false })) {
    if (!METADATA_FILE.test(o.key)) continue;
    const problems = tableMetadataProblems(JSON.parse((await store.get(o.key))!.body.toString('utf8')));
    if (problems.length > 0) invalid.push(`${o.key}: ${problems.join('; ')}`);
  }
  if (invalid.length > 0) throw new Error(`Iceberg table metadata departs from the v2 spec:\n${invalid.join('\n')}`);
}

/**
 * Every row of the table's current snapshot (or of `metadataFileName`, e.g. "v1.metadata.json"),
 * read by icebird; with `snapshotId`, of that snapshot of the metadata read (time travel). Every
 * metadata file of the table is validated first (tableMetadataProblems), so each test that reads a
 * table checks every metadata file its runs wrote.
 */
export async function icebirdRows(store: ObjectStore, table: string, metadataFileName?: string, snapshotId?: number): Promise<CanonRow[]> {
  await expectValidMetadataFiles(store, table);
  return withStoreFetch(store, async (root) => {
    const tableUrl = `${root}/${table}`;
    const read = await icebergMetadata({ tableUrl, ...(metadataFileName ? { metadataFileName } : {}) });
    const metadata = snapshotId === undefined ? read : { ...read, 'current-snapshot-id': snapshotId };
    const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id'])!;
    const rows = (await icebergRead({ tableUrl, metadata })) as Record<string, unknown>[];
    return rows.map((r) => Object.fromEntries(schema.fields.map((f) => [f.name, canon(r[f.name], String(f.type))])));
  });
}

/** Rows in a stable order, to compare two reads as multisets. */
export function sortedRows(rows: readonly CanonRow[]): string[] {
  return rows.map((r) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))).sort();
}

/**
 * Each table's rows (as sortedRows) of a fresh export of the job with the Parquet engine into
 * `<dir>/out`: what an Iceberg table of the same job must read as.
 */
export async function freshExportRows(
  input: Omit<ExportJobInput, 'destination' | 'flags'>,
  tables: readonly string[],
): Promise<Record<string, string[]>> {
  const out = join(input.dir, 'out');
  const r = await exportJob({ ...input, destination: out, flags: { format: 'parquet' } });
  if (r.status !== 'succeeded') throw new Error(`the fresh export in ${input.dir} ended ${r.status}`);
  return Object.fromEntries(await Promise.all(tables.map(async (t) => [t, sortedRows(await readTable(out, t, 'parquet'))] as const)));
}

export interface AvroFile {
  metadata: Record<string, string>;
  /** The writer schema's fields (name, field-id). */
  fields: { name: string; 'field-id'?: number }[];
  records: Record<string, unknown>[];
}

const FASTAVRO_SCRIPT = `
import json, sys, base64
import fastavro
out = {}
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        r = fastavro.reader(f)
        meta = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.metadata.items() if not k.startswith('avro.')}
        schema = r.writer_schema
        recs = list(r)
    def plain(v):
        if isinstance(v, bytes): return base64.b64encode(v).decode()
        if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
        if isinstance(v, list): return [plain(x) for x in v]
        return v
    out[path] = {"metadata": meta, "fields": [{k: f[k] for k in ("name", "field-id") if k in f} for f in schema["fields"]], "records": [plain(x) for x in recs]}
print(json.dumps(out))
`;

/** Reads Avro container files with fastavro (one python3 process). */
export function readWithFastavro(paths: readonly string[]): Record<string, AvroFile> {
  const stdout = execFileSync('python3', ['-c', FASTAVRO_SCRIPT, ...paths], { encoding: 'utf8', maxBuffer: 1 << 30 });
  return JSON.parse(stdout) as Record<string, AvroFile>;
}

export interface SpecReadAvroFile {
  metadata: Record<string, string>;
  /** Where the file's writer schema departs from the spec's: a required field missing, another field id, type or required-ness, a field the spec lacks. */
  problems: string[];
  /** The records as a reader with the spec's schema reads them (schema resolution: optional fields the file lacks are null; dates as days). */
  records: Record<string, any>[];
}

/**
 * Reads Avro files with fastavro against an Iceberg spec schema (test/iceberg/fixtures/*.avsc):
 * each file's writer schema checked field by field against it, then every record read with it as
 * the reader schema. A manifest's partition struct is the one its `partition-spec` metadata names.
 */
export function readWithSpecSchema(specSchemaFile: string, paths: readonly string[]): Record<string, SpecReadAvroFile> {
  const script = fileURLToPath(new URL('read-avro-with-spec-schema.py', import.meta.url));
  const stdout = execFileSync('python3', [script, specSchemaFile, ...paths], { encoding: 'utf8', maxBuffer: 1 << 30 });
  return JSON.parse(stdout) as Record<string, SpecReadAvroFile>;
}

const FIELD_IDS_SCRIPT = `
import json, sys
import pyarrow.parquet as pq
out = {}
for path in sys.argv[1:]:
    s = pq.read_schema(path)
    out[path] = {f.name: int(f.metadata[b'PARQUET:field_id']) if f.metadata and b'PARQUET:field_id' in f.metadata else None for f in s}
print(json.dumps(out))
`;

/** The Iceberg field id of each column of each Parquet file, as pyarrow reads it (null: none). */
export function fieldIdsWithPyarrow(paths: readonly string[]): Record<string, Record<string, number | null>> {
  const stdout = execFileSync('python3', ['-c', FIELD_IDS_SCRIPT, ...paths], { encoding: 'utf8', maxBuffer: 1 << 30 });
  return JSON.parse(stdout) as Record<string, Record<string, number | null>>;
}
