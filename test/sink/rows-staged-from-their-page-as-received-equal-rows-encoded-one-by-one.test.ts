import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Row } from '../../src/columns/columns.js';
import { transactionsDataset } from '../../src/datasets/transactions.js';
import { closeDuckDB, createFileWriter, InvalidRowValueError } from '../../src/sink/index.js';
import { normaliseListResponse } from '../../src/source/response-records.js';
import { carryWireSource, markWirePage, markWireSource, wireSourceOf } from '../../src/source/wire-page.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { decodingWalletTarget } from './fixtures.js';
import { readWithDuckDB } from './readers.js';

const WALLET = '0x1111111111111111111111111111111111111111';
const target = decodingWalletTarget(WALLET);
const columns = transactionsDataset.columns(target);
const tmp = useTempDir('wire-staging-');
let n = 0;

afterAll(closeDuckDB);

/** A record as the contract encodes it; every fourth a plain transfer, the others an ERC-20 transfer the service decoded. */
function wireRecord(page: number, i: number): Record<string, unknown> {
  const k = page * 1000 + i;
  const to = `0x${(k + 1).toString(16).padStart(40, '2')}`;
  const transfer = i % 4 !== 0;
  return {
    chain_id: String([1, 8453][i % 2]),
    block_number: 19_000_000 + k,
    block_hash: `0x${(k + 1).toString(16).padStart(64, '0')}`,
    block_timestamp: 1_706_745_600 + k * 12,
    hash: `0x${(k + 7).toString(16).padStart(64, 'c')}`,
    nonce: k,
    transaction_index: i,
    from_address: WALLET,
    to_address: to,
    value: transfer ? '0' : `${k + 1}000000000000000000000`,
    gas_price: '30000000000',
    gas: 21000 + i,
    function_selector: transfer ? '0xa9059cbb' : null,
    data: transfer ? `0xa9059cbb000000000000000000000000${to.slice(2)}${(k + 1000).toString(16).padStart(64, '0')}` : '0x',
    max_fee_per_gas: '40000000000',
    max_priority_fee_per_gas: '1000000000',
    transaction_type: 2,
    r: '11579208923731619542357098500868790785326998466564056403945758400791312963993',
    s: String(k),
    v: '0',
    access_list_json: '[]',
    authorization_list_json: null,
    contract_address: null,
    gas_used: 21000,
    cumulative_gas_used: 1_000_000 + k,
    effective_gas_price: '31000000000',
    blob_gas_used: null,
    blob_gas_price: null,
    logs_bloom: `0x${'0'.repeat(512)}`,
    status: i % 7 === 0 ? 0 : 1,
    decoded: transfer ? { name: 'transfer', signature: 'transfer(address,uint256)', inputs: { to, amount: String(k + 1000) } } : null,
  };
}

/** The rows of one page as the run builds them: normalised, marked with their page, toRow. */
function pageRows(page: number, count: number): Row[] {
  const body = JSON.stringify({
    meta: { chain_ids: [1, 8453], page: 0, limit_per_chain: 1000, total_items: count, total_pages: 0 },
    data: Array.from({ length: count }, (_, i) => wireRecord(page, i)),
    aggregations: null,
  });
  const json = JSON.parse(body) as unknown;
  const records = normaliseListResponse(json, 'test', 'transactions', false).data;
  expect(markWirePage(body, Buffer.from(body), json, records)).toBe(true);
  return records.map((r) => {
    const row = transactionsDataset.toRow(r, target);
    carryWireSource(r, row);
    return row;
  });
}

/** The same row without its page: encoded from its values. */
const plain = (row: Row): Row => Object.fromEntries(Object.entries(row));

async function writeFile(writes: Row[][], wire: boolean): Promise<string> {
  const writer = await createFileWriter({
    format: 'parquet',
    parquetEngine: 'duckdb',
    columns,
    stagingDir: join(tmp.dir, `w${n++}`),
    ...(wire ? { wireColumns: transactionsDataset.wireColumns } : {}),
  });
  for (const rows of writes) await writer.write(rows);
  return (await writer.finish()).path;
}

describe('rows staged from their page as received equal rows encoded one by one', () => {
  const a = pageRows(0, 60);
  const b = pageRows(1, 40);
  const cases: [string, Row[][]][] = [
    ['whole pages in order', [a, b]],
    ['a page split across writes', [a.slice(0, 25), a.slice(25), b]],
    [
      'some rows of each page (the others belong to another chain or came before)',
      [a.filter((_, i) => i % 2 === 0), b.filter((_, i) => i % 3 !== 1)],
    ],
    ['rows out of their page order', [[...a].reverse(), b.slice(20), b.slice(0, 20)]],
    ['a page, another, then the first again', [a.slice(0, 10), b, a.slice(10)]],
    [
      'rows with a page between rows without one',
      [[...a.slice(0, 5), plain(a[5]!), plain(a[6]!), ...a.slice(7, 30), plain(b[0]!), ...b.slice(1)]],
    ],
    ['no rows', []],
  ];

  for (const [name, writes] of cases) {
    it(`${name}: the same values in the same order`, async () => {
      const expected = await readWithDuckDB(
        await writeFile(
          writes.map((rows) => rows.map(plain)),
          false,
        ),
        columns,
      );
      const got = await readWithDuckDB(await writeFile(writes, true), columns);
      expect(got.length).toBe(writes.flat().length);
      expect(got).toEqual(expected);
    });
  }

  it("takes a copied column's value from the page's bytes, and every other from the row", async () => {
    const row = a[1]!;
    const members = Buffer.from(JSON.stringify({ ...wireRecord(0, 1), gas: 99, item_id: 'not read from the page' }));
    markWireSource(row, { members, count: 1 }, 0);
    const [got] = await readWithDuckDB(await writeFile([[row]], true), columns);
    expect(got!.gas).toBe('99');
    expect(got!.item_id).toBe(row.item_id);
    expect(got!.decoded_function_name).toBe('transfer');
  });

  it('checks the values that do not come from the page, and leaves no file behind', async () => {
    const rows = pageRows(2, 5);
    expect(wireSourceOf(rows[3]!)?.page).toBeDefined();
    rows[3]!.block_time = 'yesterday';
    const stagingDir = join(tmp.dir, 'invalid');
    const writer = await createFileWriter({ format: 'parquet', columns, stagingDir, wireColumns: transactionsDataset.wireColumns });
    const err = await writer.write(rows).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRowValueError);
    expect((err as InvalidRowValueError).column).toBe('block_time');
    expect(readdirSync(stagingDir)).toEqual([]);
  });
});
