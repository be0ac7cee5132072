/**
 * The rows of an export read back by independent readers and reduced to a digest: DuckDB for
 * Parquet and NDJSON data files, icebird for Iceberg tables. Values are canonical (integers and
 * timestamps as decimal strings, timestamps in microseconds since the epoch, dates as
 * YYYY-MM-DD, booleans, null, anything else as DuckDB's or JSON's text); a row is the JSON of its
 * [column, value] pairs sorted by column name, and a table's rows are sorted by that text (the
 * whole row is the key, so equal rows stay counted).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { icebergMetadata, icebergRead } from 'icebird';

export type CanonValue = string | boolean | null;

export interface TableDigest {
  /** Rows read back. */
  rows: number;
  /** SHA-256 of the columns' names and reader types, one `name type` a line. */
  columns: string;
  /** SHA-256 of the sorted canonical rows, one a line. */
  sha256: string;
}

/** One export's tables by name. */
export type ExportDigest = Record<string, TableDigest>;

export type ReadFormat = 'parquet' | 'ndjson' | 'iceberg';

/** Folders at a destination's root that are not tables (state, staging, leases). */
const NOT_TABLES = /^[._]/;

/** The tables an export wrote: the folders at its root, sorted. */
export function tablesAt(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !NOT_TABLES.test(e.name))
    .map((e) => e.name)
    .sort();
}

/** Every table's digest of the export at `root`; `rewrite` may replace a value first (e.g. a run's day). */
export async function digestExport(root: string, format: ReadFormat, rewrite?: (v: CanonValue) => CanonValue): Promise<ExportDigest> {
  const out: ExportDigest = {};
  for (const table of tablesAt(root)) {
    const { columns, rows } = format === 'iceberg' ? await icebirdTable(root, table) : await duckdbTable(root, table, format);
    const lines = rows
      .map((r) => canonicalRow(rewrite ? Object.fromEntries(Object.entries(r).map(([k, v]) => [k, rewrite(v)])) : r))
      .sort();
    out[table] = {
      rows: rows.length,
      columns: sha256(columns.map((c) => `${c.name} ${c.type}`).join('\n')),
      sha256: sha256(lines.join('\n')),
    };
  }
  return out;
}

/** The sorted canonical rows of one table (for comparing two exports row by row). */
export async function tableRows(root: string, table: string, format: ReadFormat): Promise<string[]> {
  const { rows } = format === 'iceberg' ? await icebirdTable(root, table) : await duckdbTable(root, table, format);
  return rows.map(canonicalRow).sort();
}

export function canonicalRow(row: Record<string, CanonValue>): string {
  return JSON.stringify(Object.entries(row).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

interface ReadTable {
  columns: { name: string; type: string }[];
  rows: Record<string, CanonValue>[];
}

// ------------------------------------------------------------------ DuckDB (Parquet, NDJSON)

let duck: Promise<DuckDBInstance> | undefined;

async function query(sql: string): Promise<Record<string, unknown>[]> {
  duck ??= DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await (await duck).connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
  }
}

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;
const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

async function duckdbTable(root: string, table: string, format: 'parquet' | 'ndjson'): Promise<ReadTable> {
  const glob = join(root, table, '**', format === 'parquet' ? '*.parquet' : '*.ndjson*');
  const source =
    format === 'parquet'
      ? `read_parquet(${sqlString(glob)}, hive_partitioning = false)`
      : `read_json(${sqlString(glob)}, format = 'newline_delimited', sample_size = -1, hive_partitioning = false)`;
  const columns = (await query(`DESCRIBE SELECT * FROM ${source}`)).map((r) => ({
    name: String(r.column_name),
    type: String(r.column_type),
  }));
  const select = columns
    .map(({ name, type }) =>
      type.startsWith('TIMESTAMP')
        ? `CAST(epoch_us(${ident(name)}) AS VARCHAR) AS ${ident(name)}`
        : type === 'BOOLEAN'
          ? ident(name)
          : `CAST(${ident(name)} AS VARCHAR) AS ${ident(name)}`,
    )
    .join(', ');
  const rows = (await query(`SELECT ${select} FROM ${source}`)).map((r) => {
    const row: Record<string, CanonValue> = {};
    for (const { name } of columns) {
      const v = r[name];
      row[name] = v === undefined || v === null ? null : typeof v === 'boolean' ? v : String(v);
    }
    return row;
  });
  return { columns, rows };
}

// ------------------------------------------------------------------ icebird (Iceberg)

/** Serves icebird's file:// requests (with Range and HEAD) from the local disk. */
async function fileFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!url.startsWith('file://')) return unpatched(input, init);
  let body: Buffer;
  try {
    body = readFileSync(fileURLToPath(url));
  } catch {
    return new Response('not found', { status: 404, statusText: 'Not Found' });
  }
  if (init?.method === 'HEAD') return new Response(null, { status: 200, headers: { 'content-length': String(body.length) } });
  const range = /bytes=(\d+)-(\d*)/.exec(new Headers(init?.headers).get('range') ?? '');
  if (!range) return new Response(body, { status: 200 });
  const end = range[2] === '' ? body.length : Number(range[2]) + 1;
  return new Response(body.subarray(Number(range[1]), end), { status: 206 });
}

const unpatched = globalThis.fetch;

function canonIceberg(value: unknown, type: string): CanonValue {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return type === 'date' ? value.toISOString().slice(0, 10) : String(BigInt(value.getTime()) * 1000n);
  if (typeof value === 'bigint' || typeof value === 'number') return String(value);
  if (typeof value === 'boolean' || typeof value === 'string') return value;
  return JSON.stringify(value);
}

async function icebirdTable(root: string, table: string): Promise<ReadTable> {
  globalThis.fetch = fileFetch as typeof fetch;
  try {
    const tableUrl = pathToFileURL(join(root, table)).href;
    const metadata = await icebergMetadata({ tableUrl });
    const schema = metadata.schemas.find((s) => s['schema-id'] === metadata['current-schema-id'])!;
    const read = (await icebergRead({ tableUrl, metadata })) as Record<string, unknown>[];
    const columns = schema.fields.map((f) => ({ name: f.name, type: JSON.stringify(f.type) }));
    const rows = read.map((r) => Object.fromEntries(schema.fields.map((f) => [f.name, canonIceberg(r[f.name], String(f.type))])));
    return { columns, rows };
  } finally {
    globalThis.fetch = unpatched;
  }
}
