/**
 * Settings a job file and a config file share (output, concurrency, retries), as zod schemas.
 * Field names are the file's (snake_case); values come out normalised (bytes, milliseconds,
 * absolute destinations).
 */
import { z } from 'zod';
import { fileField } from '../config/settings.js';
import type { Compression, OutputFormat, ParquetEngine } from '../sink/sink.js';
import type { Destination } from './values.js';

export { checked, REQUESTS_PER_SECOND_RANGE, requestsPerSecondInRange } from '../config/settings.js';

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

/** The output section of a job file (`jobDir`: its folder); each field is declared in the settings table (src/config/settings.ts). */
export function outputSchema(cwd: string, jobDir?: string) {
  return z
    .strictObject({
      format: fileField('output.format'),
      compression: fileField('output.compression'),
      parquet_engine: fileField('output.parquet_engine'),
      destination: fileField('output.destination', cwd, jobDir),
      partitioning: fileField('output.partitioning'),
      max_rows_per_file: fileField('output.max_rows_per_file'),
      max_bytes_per_file: fileField('output.max_bytes_per_file'),
    })
    .describe('Output files: format, compression, destination and layout.');
}

export const concurrencySchema = z
  .strictObject({
    requests_in_flight: fileField('concurrency.requests_in_flight'),
    units_in_flight: fileField('concurrency.units_in_flight'),
    requests_per_second: fileField('concurrency.requests_per_second'),
  })
  .describe('How hard to push the service.');

export const retriesSchema = z
  .strictObject({
    max_attempts: fileField('retries.max_attempts'),
    timeout: fileField('retries.timeout_ms'),
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
