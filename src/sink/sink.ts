import type { Column, Row } from '../columns/columns.js';
import type { ContentDigests } from './content-digest.js';

/** `iceberg`: Parquet data files (DuckDB, Iceberg field ids) of Iceberg v2 tables (src/iceberg/). */
export type OutputFormat = 'parquet' | 'ndjson' | 'iceberg';
export type ParquetEngine = 'duckdb' | 'hyparquet';
export type Compression = 'zstd' | 'snappy' | 'gzip' | 'none';

export interface FileWriterOptions {
  format: OutputFormat;
  /** Parquet only. */
  parquetEngine?: ParquetEngine;
  /** Parquet default zstd; NDJSON default gzip (NDJSON supports gzip | none). */
  compression?: Compression;
  columns: Column[];
  /** Local staging directory; the writer creates its temp files here and removes them. */
  stagingDir: string;
  /** gzip level 1-9 (NDJSON default 3) or zstd level 1-22 (default 3). */
  compressionLevel?: number;
  /** Parquet rows per row group (default 50000 for DuckDB, 25000 for hyparquet). */
  rowGroupSize?: number;
  /** Iceberg only, and required there: the field id the table keeps for each column, by name. */
  fieldIds?: ReadonlyMap<string, number> | undefined;
}

export interface FinishedFile extends ContentDigests {
  /** Local path of the finished file (inside stagingDir); the caller uploads then deletes it. */
  path: string;
  rows: number;
  bytes: number;
  /** File name extension incl. compression, e.g. ".parquet", ".ndjson.gz". */
  extension: string;
}

/**
 * Writes one output file. Rows go in page by page (back-pressure: await each write);
 * finish() produces the final local file; abort() removes everything it wrote.
 */
export interface FileWriter {
  write(rows: Row[]): Promise<void>;
  /** Rows written so far and an estimate of the encoded bytes (for rollover decisions). */
  readonly rows: number;
  readonly approxBytes: number;
  finish(): Promise<FinishedFile>;
  abort(): Promise<void>;
}
