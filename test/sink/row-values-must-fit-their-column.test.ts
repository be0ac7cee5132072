import { afterAll, describe, expect, it } from 'vitest';
import { column, type ColumnType, type RowValue } from '../../src/columns/columns.js';
import { closeDuckDB, createFileWriter, InvalidRowValueError, type FileWriterOptions } from '../../src/sink/index.js';
import { MAX_UINT256 } from './fixtures.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('sink-values-');
afterAll(async () => {
  await closeDuckDB();
});

const KINDS: Pick<FileWriterOptions, 'format' | 'parquetEngine'>[] = [
  { format: 'ndjson' },
  { format: 'parquet', parquetEngine: 'duckdb' },
  { format: 'parquet', parquetEngine: 'hyparquet' },
];

const ABOVE_MAX_UINT256 = (2n ** 256n).toString();

const BAD: [ColumnType, unknown][] = [
  ['int32', 2147483648],
  ['int32', -2147483649],
  ['int32', 1.5],
  ['int32', '1'],
  ['int64', 2 ** 53],
  ['int64', 1.5],
  ['int64', '12'],
  ['int64', Number.NaN],
  ['uint256', ABOVE_MAX_UINT256],
  ['uint256', `${MAX_UINT256}0`],
  ['uint256', '-1'],
  ['uint256', '007'],
  ['uint256', '1e18'],
  ['uint256', '0x10'],
  ['uint256', 10],
  ['string', 5],
  ['json', { a: 1 }],
  ['bool', 1],
  ['bool', 'true'],
  ['timestamp', '2024-02-30T00:00:00Z'],
  ['timestamp', '2023-02-29T00:00:00Z'],
  ['timestamp', '2024-01-01 00:00:00'],
  ['timestamp', '2024-01-01T24:00:00Z'],
  ['timestamp', '2024-01-01T00:00:00+02:00'],
  ['timestamp', '2024-01-01T00:00:00.1234567Z'],
  ['timestamp', 1704067200],
  ['date', '2024-13-01'],
  ['date', '2024-04-31'],
  ['date', '2024-01-01T00:00:00Z'],
];

const GOOD: [ColumnType, RowValue][] = [
  ['uint256', MAX_UINT256],
  ['uint256', '0'],
  ['timestamp', '2024-02-29T23:59:59Z'],
  ['timestamp', '2000-02-29T00:00:00.000001Z'],
  ['date', '2000-02-29'],
  ['int64', -Number.MAX_SAFE_INTEGER],
];

describe.each(KINDS)('$format $engine', (kind) => {
  it.each(BAD)('rejects %s value %j with InvalidRowValueError', async (type, value) => {
    const writer = await createFileWriter({ ...kind, columns: [column('v', type, '')], stagingDir: tmp.dir });
    const err = await writer.write([{ v: value as RowValue }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRowValueError);
    expect((err as InvalidRowValueError).column).toBe('v');
    expect((err as InvalidRowValueError).hint).toContain(type);
    await writer.abort();
  });

  it.each(GOOD)('accepts %s value %j', async (type, value) => {
    const writer = await createFileWriter({ ...kind, columns: [column('v', type, '')], stagingDir: tmp.dir });
    await writer.write([{ v: value }]);
    const file = await writer.finish();
    expect(file.rows).toBe(1);
    await writer.abort();
  });
});
