/**
 * The sink stage: one FileWriter per output file.
 *
 *  - NDJSON: one object per line, the declared columns in declared order, gzip (level 3) or plain.
 *  - Parquet, DuckDB engine (default): rows staged as plain NDJSON, converted by one COPY on
 *    finish(); conversions of the process queue one at a time (1 thread, 512MB, ~470 MB peak).
 *  - Parquet, hyparquet engine (pure JS): row groups of 25k rows encoded as they fill up.
 *  - Iceberg: the DuckDB engine's Parquet with Iceberg field ids (the table: src/iceberg/).
 *
 * Both Parquet engines write the same schema (column-types.ts). Every writer checks each value
 * against its column (row-values.ts), and leaves no file behind on abort() or failure: all its
 * files are `insight-export-*` names directly inside stagingDir.
 */
import { COLUMN_TYPES } from './column-types.js';
import { errorMessage, InsightExportError } from '../errors.js';
import { FileWriteError, UnsupportedOutputError } from './errors.js';
import { NdjsonFileWriter } from './ndjson.js';
import { DuckDBParquetWriter } from './parquet-duckdb.js';
import {
  compressionAllowed,
  compressionsText,
  DEFAULT_PARQUET_ENGINE,
  defaultCompression,
  FORMAT_RULES,
  OUTPUT_FORMATS,
  PARQUET_ENGINES,
} from './formats.js';
import type { Compression, FileWriter, FileWriterOptions, OutputFormat, ParquetEngine } from './sink.js';

export type { Compression, FileWriter, FileWriterOptions, FinishedFile, OutputFormat, ParquetEngine } from './sink.js';
export { duckdbType, parquetColumnTypes } from './column-types.js';
export type { DuckDBTypeName, ParquetColumnType, ParquetConvertedType, ParquetLogicalType, ParquetPhysicalType } from './column-types.js';
export { closeDuckDB, configureDuckDB, type DuckDBSettings } from './parquet-duckdb.js';
export { FileWriteError, FileWriterStateError, InvalidRowValueError, UnsupportedOutputError } from './errors.js';
export { STAGING_PREFIX } from './staging.js';

export {
  compressionAllowed,
  COMPRESSIONS,
  compressionsList,
  compressionsText,
  contentType,
  DEFAULT_FORMAT,
  DEFAULT_PARQUET_ENGINE,
  defaultCompression,
  ICEBERG_DATA_EXTENSION,
  OUTPUT_FORMATS,
  PARQUET_ENGINES,
} from './formats.js';

const DEFAULT_ROW_GROUP_SIZE: Record<ParquetEngine, number> = { duckdb: 50_000, hyparquet: 25_000 };
/**
 * Level 3, not zlib's 6: on transaction rows level 6 costs ~50% more CPU for files ~10% smaller
 * (bench/experiments/stages.ts: 19.3 vs 13.1 µs/row, ratio 0.144 vs 0.161), and the export is CPU-bound
 * (bench: NDJSON.gz export 17k -> 30k rows/s on 2 cores).
 */
const DEFAULT_NDJSON_GZIP_LEVEL = 3;
const LEVELS: Partial<Record<Compression, [min: number, max: number]>> = { gzip: [1, 9], zstd: [1, 22] };

function unsupported(what: string, got: unknown, allowed: readonly unknown[]): UnsupportedOutputError {
  return new UnsupportedOutputError(`Unsupported output ${what}: ${JSON.stringify(got)}`, {
    details: `${what} must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
    hint: `Parquet takes compression ${compressionsText('parquet')}; NDJSON takes ${compressionsText('ndjson')}.`,
  });
}

function resolveFormat(format: unknown): OutputFormat {
  if (!OUTPUT_FORMATS.includes(format as OutputFormat)) throw unsupported('format', format, OUTPUT_FORMATS);
  return format as OutputFormat;
}

function resolveCompression(format: OutputFormat, compression: unknown): Compression {
  if (compression === undefined) return defaultCompression(format);
  if (!compressionAllowed(format, compression as Compression)) {
    throw unsupported(`compression for ${format}`, compression, FORMAT_RULES[format].compressions);
  }
  return compression as Compression;
}

/** File name extension incl. compression: ".parquet", ".ndjson.gz" or ".ndjson". */
export function fileExtension(format: OutputFormat, compression?: Compression): string {
  const f = resolveFormat(format);
  return FORMAT_RULES[f].extension(resolveCompression(f, compression));
}

function validateOptions(opts: FileWriterOptions): void {
  if (typeof opts.stagingDir !== 'string' || opts.stagingDir === '') {
    throw new UnsupportedOutputError('The file writer needs a staging directory', {
      details: `stagingDir: ${JSON.stringify(opts.stagingDir)}`,
    });
  }
  if (!Array.isArray(opts.columns) || opts.columns.length === 0) {
    throw new UnsupportedOutputError('The file writer needs at least one column', { hint: 'Select at least one column of the dataset.' });
  }
  const seen = new Set<string>();
  for (const col of opts.columns) {
    if (typeof col.name !== 'string' || col.name === '' || seen.has(col.name)) {
      throw new UnsupportedOutputError(`Column names must be unique and non-empty: ${JSON.stringify(col.name)}`, {
        details: `columns: ${opts.columns.map((c) => c.name).join(', ')}`,
      });
    }
    seen.add(col.name);
    if (!COLUMN_TYPES.includes(col.type)) throw unsupported(`type of column "${col.name}"`, col.type, COLUMN_TYPES);
  }
  if (resolveFormat(opts.format) === 'iceberg') {
    const missing = opts.columns.filter((c) => opts.fieldIds?.get(c.name) === undefined).map((c) => c.name);
    if (missing.length > 0)
      throw new UnsupportedOutputError('An Iceberg data file needs the field id of each column in its table', {
        details: `no field id for ${missing.join(', ')}`,
      });
  }
}

function resolveLevel(compression: Compression, level: unknown, engine: ParquetEngine | undefined): number | undefined {
  if (level === undefined) return undefined;
  const range = LEVELS[compression];
  if (!range || (engine === 'duckdb' && compression !== 'zstd')) {
    throw new UnsupportedOutputError(`A compression level does not apply to ${compression}${engine ? ` with the ${engine} engine` : ''}`, {
      hint: 'Set compressionLevel only for gzip (1-9) or zstd (1-22); DuckDB takes a level for zstd only.',
    });
  }
  if (typeof level !== 'number' || !Number.isInteger(level) || level < range[0] || level > range[1]) {
    throw new UnsupportedOutputError(`Invalid ${compression} compression level: ${JSON.stringify(level)}`, {
      details: `${compression} levels are integers ${range[0]}-${range[1]}`,
    });
  }
  return level;
}

/**
 * One output file: NDJSON (gzip or plain) or Parquet (DuckDB, the default, or hyparquet-writer).
 * Unsupported combinations are rejected with an UnsupportedOutputError (exit code 2); a staging
 * directory that cannot be created fails with a FileWriteError.
 */
export async function createFileWriter(opts: FileWriterOptions): Promise<FileWriter> {
  const resolved = resolveWriter(opts);
  try {
    return await resolved();
  } catch (err) {
    if (err instanceof InsightExportError) throw err;
    throw new FileWriteError('Cannot create the output file in the staging directory', {
      details: `${opts.stagingDir}: ${errorMessage(err)}`,
      hint: 'The staging directory must be a writable local directory (it is created if missing).',
      cause: err,
    });
  }
}

/** Validates the options and returns the constructor call of the writer they select. */
function resolveWriter(opts: FileWriterOptions): () => Promise<FileWriter> {
  const format = resolveFormat(opts.format);
  const compression = resolveCompression(format, opts.compression);
  validateOptions(opts);
  const extension = fileExtension(format, compression);
  const columns = [...opts.columns];

  if (format === 'ndjson') {
    const level = resolveLevel(compression, opts.compressionLevel, undefined);
    return () =>
      NdjsonFileWriter.create({
        columns,
        stagingDir: opts.stagingDir,
        gzipLevel: compression === 'gzip' ? (level ?? DEFAULT_NDJSON_GZIP_LEVEL) : null,
        extension,
      });
  }

  // Iceberg data files carry field ids, which only the DuckDB engine writes.
  const engine = format === 'iceberg' ? 'duckdb' : (opts.parquetEngine ?? DEFAULT_PARQUET_ENGINE);
  if (!PARQUET_ENGINES.includes(engine)) throw unsupported('Parquet engine', engine, PARQUET_ENGINES);
  const level = resolveLevel(compression, opts.compressionLevel, engine);
  const rowGroupSize = opts.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE[engine];
  if (!Number.isSafeInteger(rowGroupSize) || rowGroupSize < 1) {
    throw new UnsupportedOutputError(`Invalid Parquet row group size: ${JSON.stringify(opts.rowGroupSize)}`, {
      hint: 'rowGroupSize is a positive integer number of rows (e.g. 50000).',
    });
  }
  if (engine === 'duckdb') {
    return () =>
      DuckDBParquetWriter.create({
        columns,
        stagingDir: opts.stagingDir,
        compression,
        rowGroupSize,
        compressionLevel: level,
        fieldIds: format === 'iceberg' ? opts.fieldIds : undefined,
      });
  }
  return async () =>
    (await import('./parquet-hyparquet.js')).HyparquetParquetWriter.create({
      columns,
      stagingDir: opts.stagingDir,
      compression,
      rowGroupSize,
      compressionLevel: level,
    });
}
