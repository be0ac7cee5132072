import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Row } from '../../src/columns/columns.js';
import {
  closeDuckDB,
  createFileWriter,
  FileWriteError,
  FileWriterStateError,
  InvalidRowValueError,
  type FileWriterOptions,
} from '../../src/sink/index.js';
import { makeTransactionRows, transactionColumns } from './fixtures.js';
import { useTempDir } from '../helpers/temp-dir.js';

const KINDS: { label: string; opts: Pick<FileWriterOptions, 'format' | 'parquetEngine' | 'compression'> }[] = [
  { label: 'NDJSON.gz', opts: { format: 'ndjson', compression: 'gzip' } },
  { label: 'NDJSON', opts: { format: 'ndjson', compression: 'none' } },
  { label: 'Parquet DuckDB', opts: { format: 'parquet', parquetEngine: 'duckdb' } },
  { label: 'Parquet hyparquet', opts: { format: 'parquet', parquetEngine: 'hyparquet' } },
];

const rows = makeTransactionRows(3000);
const tmp = useTempDir('sink-cleanup-');
let stagingDir: string;
let n = 0;

beforeEach(() => {
  stagingDir = join(tmp.dir, `case-${n++}`);
});

afterAll(async () => {
  await closeDuckDB();
});

const listStaging = () => {
  try {
    return readdirSync(stagingDir);
  } catch {
    return [];
  }
};

describe.each(KINDS)('$label', ({ opts }) => {
  const create = (extra: Partial<FileWriterOptions> = {}) =>
    createFileWriter({ ...opts, columns: transactionColumns, stagingDir, rowGroupSize: 1000, ...extra });

  it('abort() after some writes removes every file it made', async () => {
    const writer = await create();
    // More than the streams' 4 MB buffers, so the files exist on disk before abort().
    for (let i = 0; i < 3; i++) await writer.write(rows);
    expect(listStaging().length).toBeGreaterThan(0);
    await writer.abort();
    expect(listStaging()).toEqual([]);
    await expect(writer.write(rows.slice(0, 1))).rejects.toBeInstanceOf(FileWriterStateError);
    await writer.abort(); // idempotent
  });

  it('abort() right after create (no write) leaves nothing', async () => {
    const writer = await create();
    await writer.abort();
    expect(listStaging()).toEqual([]);
  });

  it('abort() while finish() runs leaves nothing', async () => {
    const writer = await create();
    await writer.write(rows);
    const finishing = writer.finish();
    await writer.abort();
    await finishing.catch(() => undefined);
    expect(listStaging()).toEqual([]);
  });

  it('finish() leaves exactly the finished file; abort() afterwards removes it too', async () => {
    const writer = await create();
    await writer.write(rows.slice(0, 10));
    const file = await writer.finish();
    expect(listStaging()).toEqual([file.path.slice(stagingDir.length + 1)]);
    await expect(writer.write(rows.slice(0, 1))).rejects.toBeInstanceOf(FileWriterStateError);
    await expect(writer.finish()).rejects.toBeInstanceOf(FileWriterStateError);
    await writer.abort();
    expect(listStaging()).toEqual([]);
  });

  it('a value that does not fit its column fails with a typed error naming the column, and removes the files', async () => {
    const writer = await create();
    await writer.write(rows.slice(0, 1200));
    const bad: Row[] = rows.slice(0, 5).map((r) => ({ ...r }));
    bad[3]!.value = '12.5';
    const err = await writer.write(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRowValueError);
    expect((err as InvalidRowValueError).column).toBe('value');
    expect((err as InvalidRowValueError).details).toContain('row 3 of the page (row 1203 of the file)');
    expect((err as InvalidRowValueError).details).toContain('"12.5"');
    expect(listStaging()).toEqual([]);
    await expect(writer.finish()).rejects.toBeInstanceOf(FileWriterStateError);
  });

  it('a null in a non-nullable column is rejected', async () => {
    const writer = await create();
    const err = await writer.write([{ ...rows[0]!, hash: null }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRowValueError);
    expect((err as InvalidRowValueError).shortMessage).toBe('Column "hash" is not nullable');
    expect(listStaging()).toEqual([]);
  });

  it('a staging directory that cannot be created fails with a typed error', async () => {
    // A regular file where the staging directory should be.
    stagingDir = join(tmp.dir, `not-a-dir-${n}`);
    writeFileSync(stagingDir, 'x');
    const err = await create().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileWriteError);
    expect((err as FileWriteError).details).toContain(stagingDir);
  });
});

describe('DuckDB conversion failure', () => {
  it('reports a FileWriteError and removes staged and partial files', async () => {
    const writer = await createFileWriter({ format: 'parquet', parquetEngine: 'duckdb', columns: transactionColumns, stagingDir });
    for (let i = 0; i < 3; i++) await writer.write(rows);
    // Pull the staged NDJSON from under the writer: DuckDB must fail, and the writer clean up.
    const staged = readdirSync(stagingDir).find((f) => f.endsWith('.staged.ndjson'))!;
    rmSync(join(stagingDir, staged));
    const err = await writer.finish().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FileWriteError);
    expect((err as FileWriteError).shortMessage).toContain('DuckDB');
    expect(listStaging()).toEqual([]);
  });
});
