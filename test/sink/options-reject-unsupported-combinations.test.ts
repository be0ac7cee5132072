import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { column } from '../../src/columns/columns.js';
import { ExitCode, UserInputError } from '../../src/errors.js';
import { createFileWriter, duckdbType, fileExtension, UnsupportedOutputError, type FileWriterOptions } from '../../src/sink/index.js';
import { transactionColumns } from './fixtures.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('sink-options-');

const base = (): FileWriterOptions => ({ format: 'parquet', columns: transactionColumns, stagingDir: tmp.dir });

async function rejection(opts: Partial<FileWriterOptions> | Record<string, unknown>): Promise<UnsupportedOutputError> {
  const err = await createFileWriter({ ...base(), ...opts } as FileWriterOptions).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(UnsupportedOutputError);
  expect(err).toBeInstanceOf(UserInputError);
  expect((err as UserInputError).exitCode).toBe(ExitCode.badInput);
  return err as UnsupportedOutputError;
}

describe('createFileWriter options', () => {
  it.each([
    [{ format: 'ndjson', compression: 'zstd' }, /compression for ndjson/],
    [{ format: 'ndjson', compression: 'snappy' }, /compression for ndjson/],
    [{ format: 'parquet', compression: 'brotli' }, /compression for parquet/],
    [{ format: 'parquet', compression: 'lz4' }, /compression for parquet/],
    [{ format: 'csv' }, /format/],
    [{ format: 'parquet', parquetEngine: 'parquetjs' }, /Parquet engine/],
    [{ format: 'parquet', parquetEngine: 'hyparquet', compression: 'snappy', compressionLevel: 3 }, /level does not apply to snappy/],
    [
      { format: 'parquet', parquetEngine: 'duckdb', compression: 'gzip', compressionLevel: 5 },
      /level does not apply to gzip with the duckdb engine/,
    ],
    [{ format: 'ndjson', compression: 'gzip', compressionLevel: 10 }, /Invalid gzip compression level/],
    [{ format: 'parquet', compression: 'zstd', compressionLevel: 0 }, /Invalid zstd compression level/],
    [{ format: 'parquet', rowGroupSize: 0 }, /row group size/],
    [{ format: 'parquet', rowGroupSize: 1.5 }, /row group size/],
    [{ columns: [] }, /at least one column/],
    [{ columns: [column('a', 'int64', ''), column('a', 'string', '')] }, /unique/],
    [{ columns: [{ name: 'x', type: 'float', nullable: true, description: '' }] }, /type of column "x"/],
  ])('rejects %j', async (opts, message) => {
    const err = await rejection(opts);
    expect(err.shortMessage).toMatch(message);
  });

  it('rejects before creating anything', () => {
    expect(readdirSync(tmp.dir)).toEqual([]);
  });

  it.each([
    ['parquet', undefined, '.parquet'],
    ['parquet', 'zstd', '.parquet'],
    ['parquet', 'none', '.parquet'],
    ['ndjson', undefined, '.ndjson.gz'],
    ['ndjson', 'gzip', '.ndjson.gz'],
    ['ndjson', 'none', '.ndjson'],
  ] as const)('fileExtension(%s, %s) is %s', (format, compression, ext) => {
    expect(fileExtension(format, compression)).toBe(ext);
  });

  it('fileExtension rejects what the writers reject', () => {
    expect(() => fileExtension('ndjson', 'zstd')).toThrow(UnsupportedOutputError);
  });

  it('accepts every supported combination and applies the defaults', async () => {
    const combos: Partial<FileWriterOptions>[] = [
      { format: 'ndjson' },
      { format: 'ndjson', compression: 'none' },
      { format: 'ndjson', compressionLevel: 1 },
      { format: 'parquet' },
      { format: 'parquet', parquetEngine: 'duckdb', compression: 'zstd', compressionLevel: 9 },
      { format: 'parquet', parquetEngine: 'hyparquet', compression: 'gzip', compressionLevel: 9 },
      { format: 'parquet', parquetEngine: 'hyparquet', compression: 'none' },
    ];
    for (const combo of combos) {
      const writer = await createFileWriter({ ...base(), ...combo });
      const file = await writer.finish();
      expect(file.extension).toBe(fileExtension(combo.format!, combo.compression));
      await writer.abort();
    }
    expect(readdirSync(tmp.dir)).toEqual([]);
  });

  it('maps column types to DuckDB types for the DDL generator', () => {
    expect(transactionColumns.map((c) => [c.type, duckdbType(c)])).toContainEqual(['timestamp', 'TIMESTAMP WITH TIME ZONE']);
    expect(duckdbType({ type: 'uint256' })).toBe('VARCHAR');
    expect(duckdbType({ type: 'int64' })).toBe('BIGINT');
    expect(duckdbType({ type: 'int32' })).toBe('INTEGER');
    expect(duckdbType({ type: 'date' })).toBe('DATE');
    expect(duckdbType({ type: 'bool' })).toBe('BOOLEAN');
    expect(duckdbType({ type: 'json' })).toBe('VARCHAR');
  });
});
