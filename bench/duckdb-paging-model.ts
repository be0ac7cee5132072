/**
 * A model of the lever left after the page staging trial (bench/RESULTS.md, 26 Nov, day): JS never
 * parses a page; DuckDB reads the page's `data` array (its bytes as received) to answer the fields
 * paging needs, and reads the same bytes again for the Parquet file. On the same sandbox pages
 * (hot wallet, 3 chains, 1,000-row pages), one process, DuckDB with one thread as the exporter
 * runs it, CPU of every thread per row:
 *
 *   npx tsx bench/duckdb-paging-model.ts [pages, default 20]
 *
 *  - span: the array's bytes found by their first `"data":[` and last `]` (the model's pages are
 *    the sandbox's, whose envelope is known) and written to a file of their own;
 *  - paging query: chain_id, block_number, transaction_index, hash and block_timestamp of every
 *    record, read by DuckDB and handed to JS (what the paginator would need instead of JSON.parse);
 *  - COPY: every page's records to one Parquet file, with item_id, block_time and wallet_address
 *    in SQL (no decoding, no normalisation: the model's pages are in the contract's encodings);
 *  - JSON.parse of the same body, for comparison (what the limit and the exporter do today).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { transactionsDataset, type WalletTransactionsTarget } from '../src/datasets/transactions.js';
import { duckdbType } from '../src/sink/column-types.js';
import { sqlIdentifier, sqlString } from '../src/sink/parquet-duckdb.js';
import { sandboxPageBodies } from './sandbox-transaction-rows.js';

const { wallet, bodies } = await sandboxPageBodies(300_000, Number(process.argv[2] ?? 20));
const buffers = bodies.map((b) => Buffer.from(b));
const target: WalletTransactionsTarget = { kind: 'wallet', address: wallet, label: wallet, decode: false };
const columns = transactionsDataset.columns(target);
const computed: Record<string, string> = {
  item_id: `concat(chain_id, ':', hash, ':', ${sqlString(wallet)})`,
  block_time: 'to_timestamp(block_timestamp)',
  wallet_address: sqlString(wallet),
};
const onWire = columns.filter((c) => !(c.name in computed));
const db = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
const connection = await db.connect();
const dir = mkdtempSync(join(tmpdir(), 'insight-duckdb-paging-model-'));
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

for (let round = 0; round < 3; round++) {
  let rows = 0;
  let span = 0;
  let paging = 0;
  let parse = 0;
  const files: string[] = [];
  for (let p = 0; p < buffers.length; p++) {
    const body = buffers[p]!;
    let t = cpuMs();
    const file = join(dir, `page-${p}.json`);
    writeFileSync(file, body.subarray(body.indexOf('"data":[') + 7, body.lastIndexOf(']') + 1));
    files.push(file);
    span += cpuMs() - t;
    t = cpuMs();
    const answer = await connection.runAndReadAll(
      `SELECT chain_id, block_number, transaction_index, hash, block_timestamp FROM read_json(${sqlString(file)}, format = 'array', ` +
        `columns = {chain_id: 'BIGINT', block_number: 'BIGINT', transaction_index: 'BIGINT', hash: 'VARCHAR', block_timestamp: 'BIGINT'})`,
    );
    rows += answer.getRowsJS().length;
    paging += cpuMs() - t;
    t = cpuMs();
    JSON.parse(bodies[p]!);
    parse += cpuMs() - t;
  }
  const declared = onWire.map((c) => `${sqlString(c.name)}: ${sqlString(duckdbType(c))}`).join(', ');
  const select = columns.map((c) => `${computed[c.name] ?? sqlIdentifier(c.name)} AS ${sqlIdentifier(c.name)}`).join(', ');
  const t = cpuMs();
  await connection.run(
    `COPY (SELECT ${select} FROM read_json([${files.map(sqlString).join(', ')}], format = 'array', columns = {${declared}})) ` +
      `TO ${sqlString(join(dir, 'out.parquet'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
  );
  const copy = cpuMs() - t;
  const perRow = (ms: number) => ((ms * 1000) / rows).toFixed(2);
  console.log(
    `round ${round}: ${rows} rows; span ${perRow(span)}, paging query ${perRow(paging)}, COPY ${perRow(copy)} µs/row; ` +
      `JSON.parse of the same bodies ${perRow(parse)} µs/row`,
  );
}
connection.closeSync();
db.closeSync();
rmSync(dir, { recursive: true, force: true });
