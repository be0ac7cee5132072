/**
 * The output formats and what each allows: compressions (the first is the default), the file
 * extension and the content type of an uploaded file. Everyone else (config, job files, the
 * writers, the upload) asks here.
 */
import type { Compression, OutputFormat, ParquetEngine } from './sink.js';

export const OUTPUT_FORMATS = ['parquet', 'ndjson', 'iceberg'] as const satisfies readonly OutputFormat[];
export const COMPRESSIONS = ['zstd', 'snappy', 'gzip', 'none'] as const satisfies readonly Compression[];
export const PARQUET_ENGINES = ['duckdb', 'hyparquet'] as const satisfies readonly ParquetEngine[];
export const DEFAULT_PARQUET_ENGINE: ParquetEngine = 'duckdb';
export const DEFAULT_FORMAT: OutputFormat = 'parquet';
export const ICEBERG_DATA_EXTENSION = '.iceberg.parquet';

interface FormatRule {
  /** Allowed compressions; the first is the default. */
  compressions: readonly [Compression, ...Compression[]];
  extension(compression: Compression): string;
  contentType(compression: Compression): string;
}

export const FORMAT_RULES: Record<OutputFormat, FormatRule> = {
  parquet: {
    compressions: ['zstd', 'snappy', 'gzip', 'none'],
    // Parquet compresses inside the file: one extension and one type whatever the codec.
    extension: () => '.parquet',
    contentType: () => 'application/vnd.apache.parquet',
  },
  // Its own extension tells an Iceberg table's data files (Parquet with field ids) from plain Parquet exports.
  iceberg: {
    compressions: ['zstd', 'snappy', 'gzip', 'none'],
    extension: () => ICEBERG_DATA_EXTENSION,
    contentType: () => 'application/vnd.apache.parquet',
  },
  ndjson: {
    compressions: ['gzip', 'none'],
    extension: (c) => (c === 'gzip' ? '.ndjson.gz' : '.ndjson'),
    contentType: (c) => (c === 'gzip' ? 'application/gzip' : 'application/x-ndjson'),
  },
};

export function defaultCompression(format: OutputFormat): Compression {
  return FORMAT_RULES[format].compressions[0];
}

export function compressionAllowed(format: OutputFormat, compression: Compression): boolean {
  return FORMAT_RULES[format].compressions.includes(compression);
}

/** "zstd (default), snappy, gzip or none": the compressions of a format, for messages and docs. */
export function compressionsText(format: OutputFormat): string {
  const [first, ...rest] = FORMAT_RULES[format].compressions;
  const list = [`${first} (default)`, ...rest];
  return list.length === 1 ? list[0]! : `${list.slice(0, -1).join(', ')} or ${list.at(-1)}`;
}

/** "gzip or none". */
export function compressionsList(format: OutputFormat): string {
  return FORMAT_RULES[format].compressions.join(' or ').replace(/ or (?=.* or )/g, ', ');
}

/** The content type of an uploaded data file. */
export function contentType(format: OutputFormat, compression: Compression | undefined): string {
  return FORMAT_RULES[format].contentType(compression ?? defaultCompression(format));
}

/** The content type of a data file by its extension ('.parquet', '.ndjson.gz', '.ndjson'), as contentType gives it for its format. */
export function contentTypeOfExtension(extension: string): string | undefined {
  for (const rule of Object.values(FORMAT_RULES)) {
    const compression = rule.compressions.find((c) => rule.extension(c) === extension);
    if (compression) return rule.contentType(compression);
  }
  return undefined;
}
