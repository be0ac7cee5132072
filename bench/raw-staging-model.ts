/**
 * A model of the design issue 17 names first: stage the raw response bodies and let DuckDB's JSON
 * reader do projection, type normalisation and the Parquet write in SQL, keeping in JS only the
 * JSON.parse that paging needs. On the same sandbox pages (hot wallet, 3 chains, 1000-row pages),
 * one process, DuckDB with one thread as the exporter runs it, CPU seconds of each path
 * (process.cpuUsage: DuckDB's threads are in-process):
 *
 *   npx tsx bench/raw-staging-model.ts [pages, default 20]
 *
 *  - today: JSON.parse -> normalise -> toRow -> NDJSON encode -> staged file, then DuckDB's COPY of it;
 *  - raw:   JSON.parse (paging) and the body bytes appended to a staged file, then one COPY that
 *           unnests `data` and casts each field in SQL.
 * Variants: the raw struct typed per column, records one per line, the data arrays as one JSON
 * array (format = 'array'); for the last two only DuckDB's side is measured.
 * Function decoding is left out of both (toRow without a decoder; the raw SELECT has no decoded
 * columns). Both Parquet files are compared row by row (EXCEPT ALL both ways) to show the SQL path
 * gives the same values on these pages.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { normaliseListResponse } from '../src/source/response-records.js';
import { transactionsDataset, type WalletTransactionsTarget } from '../src/datasets/transactions.js';
import { createNdjsonEncoder } from '../src/sink/row-values.js';
import { copyStatement, sqlIdentifier, sqlString } from '../src/sink/parquet-duckdb.js';
import { duckdbType } from '../src/sink/column-types.js';
import type { TransactionRecord } from '../src/source/records.js';
import { sandboxPageBodies } from './sandbox-transaction-rows.js';

const { wallet, bodies } = await sandboxPageBodies(300_000, Number(process.argv[2] ?? 20));
const target: WalletTransactionsTarget = { kind: 'wallet', address: wallet, label: wallet, decode: false };
const columns = transactionsDataset.columns(target);
const dir = mkdtempSync(join(tmpdir(), 'insight-raw-model-'));
const db = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
const connection = await db.connect();

function cpuMs(fn: () => unknown): Promise<number> {
  const c0 = process.cpuUsage();
  return Promise.resolve(fn()).then(() => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000;
  });
}

let rows = 0;
// Today's path.
const stagedToday = join(dir, 'today.ndjson');
const encode = createNdjsonEncoder(columns);
const jsToday = await cpuMs(() => {
  const parts: string[] = [];
  rows = 0;
  for (const body of bodies) {
    const records = normaliseListResponse(JSON.parse(body), 'model', 'transactions', false).data as TransactionRecord[];
    parts.push(
      encode(
        records.map((r) => transactionsDataset.toRow(r, target)),
        rows,
      ),
    );
    rows += records.length;
  }
  writeFileSync(stagedToday, parts.join(''));
});
const todayParquet = join(dir, 'today.parquet');
const sqlToday = await cpuMs(() => connection.run(copyStatement(columns, stagedToday, todayParquet, 'zstd', 4096)));

// Raw staging: the bodies as they came, one per line; JS parses them only for paging.
const stagedRaw = join(dir, 'raw.ndjson');
const jsRaw = await cpuMs(() => {
  const parts: string[] = [];
  for (const body of bodies) {
    const json = JSON.parse(body) as { data: { block_number: unknown }[] };
    if (json.data.length > 0) parts.push(body, '\n');
  }
  writeFileSync(stagedRaw, parts.join(''));
});
// Every wire field as text, then cast: a number keeps its JSON text, so nothing is rounded on the way.
const wireFields = columns.filter((c) => !['item_id', 'block_time', 'wallet_address'].includes(c.name));
const struct = wireFields.map((c) => `${sqlIdentifier(c.name)} VARCHAR`).join(', ');
const select = columns
  .map((c) => {
    const as = sqlIdentifier(c.name);
    if (c.name === 'item_id') return `concat(CAST(CAST(d.chain_id AS BIGINT) AS VARCHAR), ':', d.hash, ':', ${sqlString(wallet)}) AS ${as}`;
    if (c.name === 'block_time') return `to_timestamp(CAST(d.block_timestamp AS BIGINT)) AS ${as}`;
    if (c.name === 'wallet_address') return `${sqlString(wallet)} AS ${as}`;
    return `CAST(d.${as} AS ${duckdbType(c)}) AS ${as}`;
  })
  .join(', ');
const rawParquet = join(dir, 'raw.parquet');
const sqlRaw = await cpuMs(() =>
  connection.run(
    `COPY (SELECT ${select} FROM (SELECT unnest(data) AS d FROM read_json(${sqlString(stagedRaw)}, format = 'newline_delimited', ` +
      `columns = {data: ${sqlString(`STRUCT(${struct})[]`)}}, maximum_object_size = 67108864))) ` +
      `TO ${sqlString(rawParquet)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
  ),
);

// Variant: the struct declares each field in its column's type, so the reader converts while it parses.
const typedStruct = wireFields
  .map((c) => `${sqlIdentifier(c.name)} ${c.name === 'block_timestamp' || c.name === 'chain_id' ? 'BIGINT' : duckdbType(c)}`)
  .join(', ');
const typedSelect = columns
  .map((c) => {
    const as = sqlIdentifier(c.name);
    if (c.name === 'item_id') return `concat(CAST(d.chain_id AS VARCHAR), ':', d.hash, ':', ${sqlString(wallet)}) AS ${as}`;
    if (c.name === 'block_time') return `to_timestamp(d.block_timestamp) AS ${as}`;
    if (c.name === 'wallet_address') return `${sqlString(wallet)} AS ${as}`;
    return `d.${as} AS ${as}`;
  })
  .join(', ');
const typedParquet = join(dir, 'typed.parquet');
const sqlTyped = await cpuMs(() =>
  connection.run(
    `COPY (SELECT ${typedSelect} FROM (SELECT unnest(data) AS d FROM read_json(${sqlString(stagedRaw)}, format = 'newline_delimited', ` +
      `columns = {data: ${sqlString(`STRUCT(${typedStruct})[]`)}}, maximum_object_size = 67108864))) ` +
      `TO ${sqlString(typedParquet)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
  ),
);
// Variant: one record per line (what staging would hold if JS cut the body at record boundaries).
const stagedLines = join(dir, 'lines.ndjson');
writeFileSync(
  stagedLines,
  bodies.flatMap((b) => (JSON.parse(b) as { data: unknown[] }).data.map((r) => `${JSON.stringify(r)}\n`)).join(''),
);
const linesParquet = join(dir, 'lines.parquet');
const sqlLines = await cpuMs(() =>
  connection.run(
    `COPY (SELECT ${typedSelect} FROM (SELECT d FROM read_json(${sqlString(stagedLines)}, format = 'newline_delimited', ` +
      `columns = {${wireFields.map((c) => `${sqlString(c.name)}: ${sqlString(c.name === 'block_timestamp' || c.name === 'chain_id' ? 'BIGINT' : duckdbType(c))}`).join(', ')}}) AS d)) ` +
      `TO ${sqlString(linesParquet)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
  ),
);
// Variant: the `data` arrays of all pages as one JSON array (format = 'array'); the text here is
// re-encoded by JSON.stringify (not counted): only DuckDB's side is measured.
const stagedArray = join(dir, 'array.json');
writeFileSync(
  stagedArray,
  `[${bodies
    .map((b) => JSON.stringify((JSON.parse(b) as { data: unknown[] }).data).slice(1, -1))
    .filter((t) => t !== '')
    .join(',')}]`,
);
const arrayParquet = join(dir, 'array.parquet');
const sqlArray = await cpuMs(() =>
  connection.run(
    `COPY (SELECT ${typedSelect} FROM (SELECT d FROM read_json(${sqlString(stagedArray)}, format = 'array', ` +
      `columns = {${wireFields.map((c) => `${sqlString(c.name)}: ${sqlString(c.name === 'block_timestamp' || c.name === 'chain_id' ? 'BIGINT' : duckdbType(c))}`).join(', ')}}) AS d)) ` +
      `TO ${sqlString(arrayParquet)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
  ),
);

const diff = async (a: string, b: string) =>
  Number(
    (
      await connection.runAndReadAll(`SELECT count(*) FROM (SELECT * FROM ${sqlString(a)} EXCEPT ALL SELECT * FROM ${sqlString(b)})`)
    ).getRows()[0]![0],
  );
const differing = (await diff(todayParquet, rawParquet)) + (await diff(rawParquet, todayParquet));
const differingTyped = (await diff(todayParquet, typedParquet)) + (await diff(typedParquet, todayParquet));
const differingLines = (await diff(todayParquet, linesParquet)) + (await diff(linesParquet, todayParquet));
const differingArray = (await diff(todayParquet, arrayParquet)) + (await diff(arrayParquet, todayParquet));
const perRow = (ms: number) => ((ms * 1000) / rows).toFixed(2).padStart(6);
console.log(`${bodies.length} pages, ${rows} rows; rows that differ between the two Parquet files: ${differing}`);
console.log(`today: JS ${perRow(jsToday)} µs/row + DuckDB ${perRow(sqlToday)} µs/row = ${perRow(jsToday + sqlToday)} µs/row`);
console.log(`raw:   JS ${perRow(jsRaw)} µs/row + DuckDB ${perRow(sqlRaw)} µs/row = ${perRow(jsRaw + sqlRaw)} µs/row`);
console.log(`raw, typed struct: DuckDB ${perRow(sqlTyped)} µs/row (rows that differ from today's: ${differingTyped})`);
console.log(`one record per line, typed columns: DuckDB ${perRow(sqlLines)} µs/row (rows that differ from today's: ${differingLines})`);
console.log(
  `the data arrays as one JSON array, typed columns: DuckDB ${perRow(sqlArray)} µs/row (rows that differ from today's: ${differingArray})`,
);
connection.closeSync();
db.closeSync();
rmSync(dir, { recursive: true, force: true });
