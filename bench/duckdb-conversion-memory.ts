/**
 * Memory DuckDB keeps after Parquet conversions: stages N sandbox transaction rows as NDJSON (as
 * the DuckDB writer does), converts the file 8 times with the writer's COPY statement, and prints
 * RSS and its high-water mark (reset before each COPY) from /proc/self/status. Linux only.
 *
 *   node --expose-gc --import tsx bench/duckdb-conversion-memory.ts [rows=30000] ['{"duckdb":"settings"}'] [maximum_object_size]
 *   MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --expose-gc --import tsx bench/duckdb-conversion-memory.ts
 *
 * The figures of bench/RESULTS.md ("Memory"): after the 8 conversions RSS is ~480 MB with glibc's
 * defaults and ~405-425 MB with the container image's malloc settings.
 */
import { closeSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { copyStatement, rowGroupRows } from '../src/sink/parquet-duckdb.js';
import { createNdjsonEncoder } from '../src/sink/row-values.js';
import { sandboxTransactionRows } from './sandbox-transaction-rows.js';

function memory(): string {
  const status = readFileSync('/proc/self/status', 'utf8');
  const mb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)![1]) >> 10;
  return `rss ${mb('VmRSS')} MB, high-water ${mb('VmHWM')} MB`;
}

const n = Number(process.argv[2] ?? 30_000);
const settings = JSON.parse(process.argv[3] ?? '{}') as Record<string, string>;
const maxObjectSize = process.argv[4];
const staged = join(tmpdir(), `duckdb-conversion-memory-${process.pid}.ndjson`);
const out = join(tmpdir(), `duckdb-conversion-memory-${process.pid}.parquet`);

const sample = await sandboxTransactionRows(Math.ceil(n / 3000));
const columns = sample.columns;
let rows = sample.rows;
const encode = createNdjsonEncoder(columns);
const fd = openSync(staged, 'w');
let bytes = 0;
for (let i = 0; i < n; i += 1000) bytes += writeSync(fd, encode(rows.slice(i, Math.min(n, i + 1000)), i));
closeSync(fd);
// eslint-disable-next-line no-useless-assignment -- drops the rows so that gc() frees them before the measurement
rows = [];
(globalThis as { gc?: () => void }).gc?.();

const db = await DuckDBInstance.create(':memory:', {
  threads: '1',
  memory_limit: '512MB',
  preserve_insertion_order: 'true',
  max_temp_directory_size: '0KiB',
  ...settings,
});
console.log(`staged ${n} rows, ${(bytes / 2 ** 20).toFixed(1)} MB; before the conversions: ${memory()}`);
let sql = copyStatement(columns, staged, out, 'zstd', rowGroupRows(100_000, bytes, n));
if (maxObjectSize) sql = sql.replace(/maximum_object_size = \d+/, `maximum_object_size = ${maxObjectSize}`);
try {
  for (let k = 0; k < 8; k++) {
    const connection = await db.connect();
    writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM
    await connection.run(sql);
    connection.closeSync();
    console.log(`after conversion ${k}: ${memory()}`);
  }
} finally {
  rmSync(staged, { force: true });
  rmSync(out, { force: true });
}
