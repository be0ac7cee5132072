/**
 * Memory DuckDB keeps after Parquet conversions: stages N sandbox transaction rows as NDJSON (as
 * the DuckDB writer does), converts the file 8 times with the writer's COPY statement, and prints
 * RSS and its high-water mark (reset before each COPY) from /proc/self/status. Linux only.
 * The statements run on the writer's DuckDB thread (src/sink/duckdb-thread.ts), or with `--pool`
 * through the node API on whichever libuv thread is free, as the writer ran them before.
 *
 *   node --expose-gc --import tsx bench/experiments/duckdb-conversion-memory.ts [rows=30000] ['{"duckdb":"settings"}'] [maximum_object_size] [--pool]
 *   MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 node --expose-gc --import tsx bench/experiments/duckdb-conversion-memory.ts 12000
 *
 * The figures of bench/RESULTS.md ("Memory"): after the 8 conversions RSS is ~480 MB with glibc's
 * defaults and ~405-425 MB with the container image's malloc settings (30,000 rows, `--pool`);
 * 12,000 rows (23 MB staged, as a file of the bench's 1M-row run): +130 MB over the first
 * statement with `--pool`, +60 MB on the thread.
 */
import { closeSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DuckDBThread } from '../../src/sink/duckdb-thread.js';
import { copyStatement, rowGroupRows } from '../../src/sink/parquet-duckdb.js';
import { createNdjsonEncoder } from '../../src/sink/row-values.js';
import { sandboxTransactionRows } from '../sandbox-transaction-rows.js';

function memory(): string {
  const status = readFileSync('/proc/self/status', 'utf8');
  const mb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)![1]) >> 10;
  return `rss ${mb('VmRSS')} MB, high-water ${mb('VmHWM')} MB`;
}

const onPool = process.argv.includes('--pool');
const args = process.argv.slice(2).filter((a) => a !== '--pool');
const n = Number(args[0] ?? 30_000);
const settings = JSON.parse(args[1] ?? '{}') as Record<string, string>;
const maxObjectSize = args[2];
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

const config = { threads: '1', memory_limit: '512MB', preserve_insertion_order: 'true', max_temp_directory_size: '0KiB', ...settings };
let run: (sql: string) => Promise<void>;
let close: () => Promise<void>;
if (onPool) {
  const db = await DuckDBInstance.create(':memory:', config);
  run = async (sql) => {
    const connection = await db.connect();
    await connection.run(sql);
    connection.closeSync();
  };
  close = async () => db.closeSync();
} else {
  const thread = new DuckDBThread({ config });
  run = (sql) => thread.run(sql).done;
  close = () => thread.close();
}
await run('SELECT 1');
console.log(
  `staged ${n} rows, ${(bytes / 2 ** 20).toFixed(1)} MB, ${onPool ? 'libuv threads' : 'DuckDB thread'}; before the conversions: ${memory()}`,
);
let sql = copyStatement(columns, staged, out, 'zstd', rowGroupRows(100_000, bytes, n));
if (maxObjectSize) sql = sql.replace(/maximum_object_size = \d+/, `maximum_object_size = ${maxObjectSize}`);
try {
  for (let k = 0; k < 8; k++) {
    writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM
    await run(sql);
    console.log(`after conversion ${k}: ${memory()}`);
  }
} finally {
  await close();
  rmSync(staged, { force: true });
  rmSync(out, { force: true });
}
