/**
 * Every file writer gives the SHA-256 and MD5 of the file it finished (what the commit records and
 * sends with the upload): NDJSON plain and gzip, Parquet by DuckDB and by hyparquet-writer (with
 * rows over several row groups, and without rows), Iceberg data files; equal to the digests of the
 * bytes on disk, whatever way the writer hashed them (as written, or read back once).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { closeDuckDB, createFileWriter, type FileWriterOptions } from '../../src/sink/index.js';
import { makeTransactionRows, transactionColumns } from './fixtures.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('sink-digests-');
afterAll(async () => {
  await closeDuckDB();
});

const fieldIds = new Map(transactionColumns.map((c, i) => [c.name, i + 1]));
const kinds: [string, Omit<FileWriterOptions, 'columns' | 'stagingDir'>][] = [
  ['ndjson plain', { format: 'ndjson', compression: 'none' }],
  ['ndjson gzip', { format: 'ndjson', compression: 'gzip' }],
  ['parquet duckdb', { format: 'parquet', parquetEngine: 'duckdb' }],
  ['parquet hyparquet', { format: 'parquet', parquetEngine: 'hyparquet', rowGroupSize: 700 }],
  ['iceberg data file', { format: 'iceberg', fieldIds }],
];

describe.each(kinds)('%s', (_name, options) => {
  it.each([0, 1, 2_500])('%i rows: the digests given are those of the file', async (count) => {
    const writer = await createFileWriter({ ...options, columns: transactionColumns, stagingDir: tmp.dir });
    const rows = makeTransactionRows(count);
    for (let i = 0; i < rows.length; i += 600) await writer.write(rows.slice(i, i + 600));
    const file = await writer.finish();
    const bytes = readFileSync(file.path);
    expect(file.bytes).toBe(bytes.length);
    expect(file.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(file.md5).toBe(createHash('md5').update(bytes).digest('hex'));
  });
});
