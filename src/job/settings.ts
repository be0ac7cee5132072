/**
 * Settings a job file and a config file share (output, concurrency, retries), as zod schemas.
 * Field names are the file's (snake_case); values come out normalised (bytes, milliseconds,
 * absolute destinations).
 */
import { z } from 'zod';
import type { Compression, OutputFormat, ParquetEngine } from '../sink/sink.js';
import { DEFAULT_PARTITIONING, PARTITION_PLACEHOLDERS, parsePartitioning } from './partitioning.js';
import {
  BYTE_SIZE_ERROR,
  BYTE_SIZE_PATTERN,
  DURATION_ERROR,
  DURATION_PATTERN,
  parseByteSize,
  parseDestination,
  parseDurationMs,
  type Destination,
  type Parsed,
} from './values.js';

/** A base schema whose value is then checked and normalised by a `Parsed` parser; failures become located issues. */
export function checked<S extends z.ZodType, T>(base: S, parse: (v: z.output<S>) => Parsed<T>) {
  return base.transform((v, ctx): T => {
    const r = parse(v);
    if (r.ok) return r.value;
    // A value that may hold a credential is never echoed (noValue), nor kept as the issue's input.
    ctx.issues.push({
      code: 'custom',
      message: r.problem,
      input: r.secret ? '[redacted]' : v,
      params: { hint: r.hint, noValue: r.secret },
    });
    return z.NEVER;
  });
}

export const OUTPUT_FORMATS = ['parquet', 'ndjson'] as const satisfies readonly OutputFormat[];
export const COMPRESSIONS = ['zstd', 'snappy', 'gzip', 'none'] as const satisfies readonly Compression[];
export const PARQUET_ENGINES = ['duckdb', 'hyparquet'] as const satisfies readonly ParquetEngine[];
/** NDJSON files are gzip or plain. */
export const NDJSON_COMPRESSIONS: readonly Compression[] = ['gzip', 'none'];

export interface OutputSettings {
  format: OutputFormat;
  compression: Compression;
  parquet_engine: ParquetEngine;
  destination: Destination;
  partitioning: string;
  max_rows_per_file: number;
  max_bytes_per_file: number;
}

export interface ConcurrencySettings {
  requests_in_flight: number;
  units_in_flight: number;
  /** 0 = unlimited. */
  requests_per_second: number;
}

export interface RetrySettings {
  max_attempts: number;
  timeout_ms: number;
}

export function outputSchema(cwd: string) {
  return z
    .strictObject({
      format: z.enum(OUTPUT_FORMATS).optional().describe('File format: "parquet" (default) or "ndjson" (one JSON object per line).'),
      compression: z
        .enum(COMPRESSIONS)
        .optional()
        .describe('Compression: Parquet zstd (default), snappy, gzip or none; NDJSON gzip (default) or none.'),
      parquet_engine: z
        .enum(PARQUET_ENGINES)
        .optional()
        .describe('Parquet writer: "duckdb" (default, fastest) or "hyparquet" (pure JavaScript). Ignored for NDJSON.'),
      destination: checked(z.string(), (v) => parseDestination(v, cwd))
        .optional()
        .describe(
          'Where files go: "s3://bucket/prefix" or a local directory ("./out"; a relative path is taken from the working directory of the run).',
        ),
      partitioning: checked(z.string(), parsePartitioning)
        .optional()
        .describe(
          `Folder layout of data files under the destination, Hive style. Placeholders: ${PARTITION_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}. Default "${DEFAULT_PARTITIONING}".`,
        ),
      max_rows_per_file: z.number().int().positive().optional().describe('Start a new file after this many rows. Default 1000000.'),
      max_bytes_per_file: checked(
        z.union([z.number().int().positive(), z.string().regex(new RegExp(BYTE_SIZE_PATTERN), { error: BYTE_SIZE_ERROR })]),
        parseByteSize,
      )
        .optional()
        .describe(
          'Start a new file after about this many bytes: "512MB" (KB/MB/GB = 1000^n), "256MiB" (KiB/MiB/GiB = 1024^n) or a number of bytes. Default "512MB".',
        ),
    })
    .describe('Output files: format, compression, destination and layout.');
}

/** A budget below this paces one request per 100 s or slower: a typo (1e-9), not a plan. */
const MIN_REQUESTS_PER_SECOND = 0.01;
const MAX_REQUESTS_PER_SECOND = 100_000;
export const REQUESTS_PER_SECOND_RANGE = `must be 0 (unlimited) or from ${MIN_REQUESTS_PER_SECOND} to ${MAX_REQUESTS_PER_SECOND}`;

export function requestsPerSecondInRange(n: number): boolean {
  return n === 0 || (n >= MIN_REQUESTS_PER_SECOND && n <= MAX_REQUESTS_PER_SECOND);
}

export const concurrencySchema = z
  .strictObject({
    requests_in_flight: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .optional()
      .describe('Most HTTP requests open at once, over all work units. Default 8.'),
    units_in_flight: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .optional()
      .describe('Most work units (dataset x target x chain x window) processed at once. Default 4.'),
    requests_per_second: z
      .number()
      .min(0)
      .refine(requestsPerSecondInRange, { message: REQUESTS_PER_SECOND_RANGE })
      .optional()
      .describe('Request budget per second shared by all units; 0 = unlimited (default).'),
  })
  .describe('How hard to push the service.');

export const retriesSchema = z
  .strictObject({
    max_attempts: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Attempts per request (first try included) on 429, 5xx and network errors. Default 6.'),
    timeout: checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), (v) => {
      const r = parseDurationMs(v);
      return r.ok && r.value === 0 ? { ok: false, problem: 'must be longer than 0' } : r;
    })
      .optional()
      .describe('Time limit of one request, e.g. "30s" (default), "2m".'),
  })
  .describe('Retries with exponential backoff and jitter (Retry-After honoured).');

type OutputInput = z.output<ReturnType<typeof outputSchema>>;
type ConcurrencyInput = z.output<typeof concurrencySchema>;
type RetriesInput = z.output<typeof retriesSchema>;

/** Drops absent keys so that layers merge by presence. */
export function present<T extends object>(o: T): Partial<{ [K in keyof T]: Exclude<T[K], undefined> }> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<{ [K in keyof T]: Exclude<T[K], undefined> }>;
}

export function outputLayer(o: OutputInput | undefined): Partial<OutputSettings> {
  return present(o ?? {});
}
export function concurrencyLayer(c: ConcurrencyInput | undefined): Partial<ConcurrencySettings> {
  return present(c ?? {});
}
export function retriesLayer(r: RetriesInput | undefined): Partial<RetrySettings> {
  if (!r) return {};
  return present({ max_attempts: r.max_attempts, timeout_ms: r.timeout });
}
