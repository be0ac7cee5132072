/**
 * Staging Parquet rows for DuckDB: the writer's NDJSON (encode + write, then read_json in the COPY)
 * against DuckDB's Appender (one call per value into a table, then COPY from it), on 60,000
 * sandbox transaction rows, one DuckDB thread. Prints main-thread µs per row, COPY µs per row,
 * process CPU µs per row and the Parquet size, and checks both files hold the same rows.
 *
 *   npx tsx bench/duckdb-appender-staging.ts json
 *   npx tsx bench/duckdb-appender-staging.ts appender
 *
 * Result (bench/RESULTS.md): the Appender costs ~20% less CPU for this stage, but holds a whole
 * file's rows in DuckDB's memory until its COPY, where staged NDJSON holds none.
 */
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { duckdbType } from '../src/sink/column-types.js';
import { copyStatement, sqlIdentifier, sqlString } from '../src/sink/parquet-duckdb.js';
import { createNdjsonEncoder } from '../src/sink/row-values.js';
import { sandboxTransactionRows } from './sandbox-transaction-rows.js';

const mode = process.argv[2] === 'appender' ? 'appender' : 'json';
const { rows, columns } = await sandboxTransactionRows(20);
const staged = join(tmpdir(), `duckdb-appender-staging-${process.pid}.ndjson`);
const out = join(tmpdir(), `duckdb-appender-staging-${process.pid}.parquet`);
const db = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
const connection = await db.connect();
const repeats = 5;
const cpu0 = process.cpuUsage();
let mainMs = 0;
let copyMs = 0;
for (let rep = 0; rep < repeats; rep++) {
  if (mode === 'json') {
    const encode = createNdjsonEncoder(columns);
    const t0 = performance.now();
    const fd = openSync(staged, 'w');
    for (let i = 0; i < rows.length; i += 1000) writeSync(fd, encode(rows.slice(i, i + 1000), i));
    closeSync(fd);
    mainMs += performance.now() - t0;
    const t1 = performance.now();
    await connection.run(copyStatement(columns, staged, out, 'zstd', 4096));
    copyMs += performance.now() - t1;
  } else {
    await connection.run(`CREATE OR REPLACE TABLE staged (${columns.map((c) => `${sqlIdentifier(c.name)} ${duckdbType(c)}`).join(', ')})`);
    const appender = await connection.createAppender('staged');
    const t0 = performance.now();
    for (const row of rows) {
      for (const c of columns) {
        const v = row[c.name];
        if (v === null || v === undefined) appender.appendNull();
        else if (c.type === 'int32') appender.appendInteger(v as number);
        else if (c.type === 'int64') appender.appendBigInt(BigInt(v as number));
        else if (c.type === 'bool') appender.appendBoolean(v as boolean);
        else appender.appendVarchar(v as string); // DuckDB casts timestamps and dates from their text
      }
      appender.endRow();
    }
    appender.flushSync();
    appender.closeSync();
    mainMs += performance.now() - t0;
    const t1 = performance.now();
    await connection.run(`COPY staged TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`);
    copyMs += performance.now() - t1;
  }
}
const cpu = process.cpuUsage(cpu0);
const perRow = (x: number) => (x / (rows.length * repeats)).toFixed(2);
console.log(
  `${mode}: main thread ${perRow(mainMs * 1000)} µs/row, COPY ${perRow(copyMs * 1000)} µs/row, process CPU ${perRow(cpu.user + cpu.system)} µs/row, Parquet ${statSync(out).size} bytes`,
);
const check = await connection.runAndReadAll(
  `SELECT count(*), sum(gas_used::HUGEINT), min(block_time), max(block_time) FROM read_parquet(${sqlString(out)})`,
);
console.log('rows, sum(gas_used), first and last block_time:', check.getRowsJS()[0]);
rmSync(staged, { force: true });
rmSync(out, { force: true });
