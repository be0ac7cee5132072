import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { column, type Row } from '../../src/columns/columns.js';
import { closeDuckDB, createFileWriter } from '../../src/sink/index.js';
import { ROW_GROUP_BYTES } from '../../src/sink/parquet-duckdb.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('sink-row-groups-');
afterAll(async () => {
  await closeDuckDB();
});

const columns = [column('id', 'int64', '', false), column('payload', 'string', '')];
/** Rows of ~8 KB: 5000 of them are 40 MB, over two ROW_GROUP_BYTES. */
const wide: Row[] = Array.from({ length: 5000 }, (_, i) => ({ id: i, payload: `0x${i.toString(16).padStart(8, '0').repeat(1000)}` }));
const narrow: Row[] = Array.from({ length: 5000 }, (_, i) => ({ id: i, payload: 'x' }));

async function rowGroups(path: string): Promise<{ groups: number; rows: number; ids: number[] }> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const meta = (await c.runAndReadAll(`SELECT count(DISTINCT row_group_id) AS g FROM parquet_metadata('${path}')`)).getRowObjects();
  const data = (await c.runAndReadAll(`SELECT id FROM read_parquet('${path}')`)).getRowObjects();
  c.closeSync();
  db.closeSync();
  return { groups: Number(meta[0]!.g), rows: data.length, ids: data.map((r) => Number(r.id)) };
}

describe.each(['duckdb', 'hyparquet'] as const)('Parquet %s engine', (engine) => {
  it('ends row groups by bytes for wide rows (memory) and by the configured count for narrow ones, keeping every row in order', async () => {
    // Rows of ROW_GROUP_BYTES per group, rounded up: DuckDB ends groups at whole vectors of 2048
    // rows, hyparquet at the end of a write (batches of 500 rows here).
    const rowsByBytes = Math.ceil(ROW_GROUP_BYTES / 8000);
    const unit = engine === 'duckdb' ? 2048 : 500;
    const maxGroupRows = Math.ceil(rowsByBytes / unit) * unit;
    for (const [rows, expectGroups] of [
      // 40 MB of rows: several groups.
      [wide, (g: number) => g >= Math.ceil(wide.length / maxGroupRows)],
      [narrow, (g: number) => g === 1],
    ] as const) {
      const writer = await createFileWriter({
        format: 'parquet',
        parquetEngine: engine,
        columns,
        stagingDir: tmp.dir,
        rowGroupSize: 50_000,
      });
      for (let at = 0; at < rows.length; at += 500) await writer.write(rows.slice(at, at + 500));
      const file = await writer.finish();
      const got = await rowGroups(file.path);
      expect(expectGroups(got.groups), `${got.groups} row groups`).toBe(true);
      expect(got.rows).toBe(rows.length);
      expect(got.ids).toEqual(rows.map((r) => r.id));
    }
  });
});

describe('Parquet duckdb engine, a single huge row', () => {
  it("converts a row longer than the JSON reader's maximum_object_size (16 MB, which only sizes its buffers)", async () => {
    const huge = `0x${'ab'.repeat(12 * 1024 * 1024)}`; // 24 MB of hex calldata
    const writer = await createFileWriter({ format: 'parquet', parquetEngine: 'duckdb', columns, stagingDir: tmp.dir });
    await writer.write([
      { id: 1, payload: 'small' },
      { id: 2, payload: huge },
      { id: 3, payload: null },
    ]);
    const file = await writer.finish();
    const got = await rowGroups(file.path);
    expect(got.ids).toEqual([1, 2, 3]);
  });
});
