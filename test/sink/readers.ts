/**
 * Four independent Parquet readers (DuckDB, hyparquet, parquet-wasm/arrow-rs, pyarrow) that
 * turn a file into canonical rows, so the sink tests can compare every value with the input.
 *
 * Canonical value per column type: integers and timestamps (microseconds since the epoch) as
 * decimal strings, dates as YYYY-MM-DD, strings as they are, booleans, null.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readParquet } from 'parquet-wasm';
import type { Column, Row } from '../../src/columns/columns.js';

export type CanonValue = string | boolean | null;
export type CanonRow = Record<string, CanonValue>;

const DAY_MS = 86_400_000;

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The test's own oracle for `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` -> epoch microseconds. */
export function expectedMicros(iso: string): string {
  const m = /^(.{19})(?:\.(\d+))?Z$/.exec(iso);
  if (!m) throw new Error(`bad test timestamp ${iso}`);
  return (BigInt(Date.parse(`${m[1]}Z`)) * 1000n + BigInt((m[2] ?? '').padEnd(6, '0'))).toString();
}

/** What the input rows must read back as. Lone surrogates are expected as U+FFFD. */
export function canonicalInput(rows: readonly Row[], columns: readonly Column[]): CanonRow[] {
  return rows.map((row) => {
    const out: CanonRow = {};
    for (const c of columns) {
      const v = row[c.name];
      if (v === null || v === undefined) out[c.name] = null;
      else if (c.type === 'timestamp') out[c.name] = expectedMicros(v as string);
      else if (c.type === 'int32' || c.type === 'int64') out[c.name] = String(v);
      else if (typeof v === 'string') out[c.name] = (v as unknown as { toWellFormed(): string }).toWellFormed();
      else out[c.name] = v as CanonValue;
    }
    return out;
  });
}

function canon(col: Column, v: unknown): CanonValue {
  if (v === null || v === undefined) return null;
  switch (col.type) {
    case 'int32':
    case 'int64':
      return String(v);
    case 'bool':
      if (typeof v !== 'boolean') throw new Error(`${col.name}: expected boolean, got ${typeof v}`);
      return v;
    default:
      if (typeof v !== 'string') throw new Error(`${col.name}: expected string, got ${typeof v} ${String(v)}`);
      return v;
  }
}

let duck: Promise<DuckDBInstance> | undefined;
async function duckConnection() {
  duck ??= DuckDBInstance.create(':memory:', { threads: '1' });
  return (await duck).connect();
}

function duckSelect(columns: readonly Column[]): string {
  return columns
    .map((c) => {
      const id = `"${c.name.replaceAll('"', '""')}"`;
      if (c.type === 'timestamp') return `CAST(epoch_us(${id}) AS VARCHAR) AS ${id}`;
      if (c.type === 'int32' || c.type === 'int64' || c.type === 'date') return `CAST(${id} AS VARCHAR) AS ${id}`;
      return id;
    })
    .join(', ');
}

async function duckQuery(sql: string): Promise<Record<string, unknown>[]> {
  const conn = await duckConnection();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
  }
}

export async function readWithDuckDB(path: string, columns: readonly Column[]): Promise<CanonRow[]> {
  const rows = await duckQuery(`SELECT ${duckSelect(columns)} FROM read_parquet('${path}')`);
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c.name, canon(c, r[c.name])])));
}

/** DuckDB's own view of the Parquet schema: physical type, converted type, logical type per column. */
export async function duckdbParquetSchema(
  path: string,
): Promise<Record<string, { type: string; converted: string | null; repetition: string }>> {
  const rows = await duckQuery(`SELECT name, type, converted_type, repetition_type FROM parquet_schema('${path}') WHERE type IS NOT NULL`);
  return Object.fromEntries(
    rows.map((r) => [
      r.name as string,
      { type: r.type as string, converted: (r.converted_type as string | null) ?? null, repetition: r.repetition_type as string },
    ]),
  );
}

/** NDJSON(.gz) read by DuckDB's JSON reader with the declared types. */
export async function readNdjsonWithDuckDB(path: string, columns: readonly Column[]): Promise<CanonRow[]> {
  const types: Record<Column['type'], string> = {
    int32: 'INTEGER',
    int64: 'BIGINT',
    uint256: 'VARCHAR',
    string: 'VARCHAR',
    json: 'VARCHAR',
    bool: 'BOOLEAN',
    timestamp: 'TIMESTAMPTZ',
    date: 'DATE',
  };
  const decl = columns.map((c) => `'${c.name}': '${types[c.type]}'`).join(', ');
  const rows = await duckQuery(
    `SELECT ${duckSelect(columns)} FROM read_json('${path}', format = 'newline_delimited', columns = {${decl}})`,
  );
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c.name, canon(c, r[c.name])])));
}

export async function readWithHyparquet(path: string, columns: readonly Column[]): Promise<CanonRow[]> {
  const buf = readFileSync(path);
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const rows = (await parquetReadObjects({
    file,
    compressors,
    parsers: {
      timestampFromMicroseconds: (us: bigint) => us.toString(),
      dateFromDays: (days: number) => isoDay(days * DAY_MS),
    },
  })) as Record<string, unknown>[];
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c.name, canon(c, r[c.name])])));
}

export function readWithParquetWasm(path: string, columns: readonly Column[]): CanonRow[] {
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream());
  const out: CanonRow[] = Array.from({ length: table.numRows }, () => ({}));
  for (const c of columns) {
    const vec = table.getChild(c.name);
    if (!vec) throw new Error(`parquet-wasm: no column ${c.name}`);
    if (c.type === 'timestamp') {
      // Exact microseconds from the raw Int64 buffers (get() would round to milliseconds).
      let i = 0;
      for (const data of vec.data) {
        const values = data.values as BigInt64Array;
        for (let k = 0; k < data.length; k++, i++) out[i]![c.name] = vec.isValid(i) ? values[k]!.toString() : null;
      }
    } else if (c.type === 'date') {
      for (let i = 0; i < table.numRows; i++) {
        const v = vec.get(i) as number | null;
        out[i]![c.name] = v === null ? null : isoDay(v);
      }
    } else {
      for (let i = 0; i < table.numRows; i++) out[i]![c.name] = canon(c, vec.get(i));
    }
  }
  return out;
}

export interface PyarrowField {
  physical: string;
  logical: string;
  converted: string;
  arrow: string;
  max_definition_level: number;
}

export interface PyarrowFile {
  rows: CanonRow[];
  fields: Record<string, PyarrowField>;
  num_row_groups: number;
}

const PYARROW_SCRIPT = `
import json, sys
try:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyarrow.compute as pc
except ImportError as e:
    print("NO_PYARROW " + str(e))
    sys.exit(3)
out = {}
for path in sys.argv[1:]:
    f = pq.ParquetFile(path)
    fields = {}
    for i in range(f.metadata.num_columns):
        c = f.schema.column(i)
        fields[c.name] = {"physical": c.physical_type, "logical": str(c.logical_type), "converted": c.converted_type,
                          "arrow": str(f.schema_arrow.field(c.name).type), "max_definition_level": c.max_definition_level}
    t = f.read()
    cols = {}
    for name in t.column_names:
        col = t.column(name)
        ty = col.type
        if pa.types.is_timestamp(ty):
            vals = [None if v is None else str(v) for v in pc.cast(col, pa.int64()).to_pylist()]
        elif pa.types.is_date(ty):
            vals = [None if v is None else v.isoformat() for v in col.to_pylist()]
        elif pa.types.is_integer(ty):
            vals = [None if v is None else str(v) for v in col.to_pylist()]
        else:
            vals = col.to_pylist()
        cols[name] = vals
    rows = [{name: cols[name][i] for name in t.column_names} for i in range(t.num_rows)]
    out[path] = {"rows": rows, "fields": fields, "num_row_groups": f.metadata.num_row_groups}
print(json.dumps(out))
`;

/** Reads every file in one python3 process (pyarrow start-up is the slow part). */
export function readWithPyarrow(paths: readonly string[]): Record<string, PyarrowFile> {
  let stdout: string;
  try {
    stdout = execFileSync('python3', ['-c', PYARROW_SCRIPT, ...paths], { encoding: 'utf8', maxBuffer: 1 << 30 });
  } catch (err) {
    const e = err as { status?: number; stdout?: string; message: string };
    if (e.status === 3 || e.stdout?.includes('NO_PYARROW')) {
      throw new Error('pyarrow is missing: pip install pyarrow (the sink tests read Parquet back with it)', { cause: err });
    }
    throw new Error(`pyarrow reader failed: ${e.message}`, { cause: err });
  }
  return JSON.parse(stdout) as Record<string, PyarrowFile>;
}

/** NDJSON(.gz) parsed line by line in JS, keeping each line's key order. */
export function readNdjsonLines(path: string): { keys: string[]; value: Record<string, unknown> }[] {
  let bytes = readFileSync(path);
  if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
  const text = bytes.toString('utf8');
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error('NDJSON file does not end with a newline');
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const value = JSON.parse(line) as Record<string, unknown>;
      return { keys: Object.keys(value), value };
    });
}
