import type { Argv } from 'yargs';
import { resolveConfig, type CliFlags, type ResolvedConfig } from '../config/index.js';
import { loadJob } from '../job/index.js';
import type { Job } from '../job/schema.js';
import { createLogger, type Logger } from '../log.js';

/** Flags every job command takes; each overrides the job file, environment and config file. */
export function withConfigFlags<T>(y: Argv<T>) {
  return y
    .option('config', { type: 'string', describe: 'Config file (default: INSIGHT_EXPORT_CONFIG, else config/default.yaml)' })
    .option('base-url', { type: 'string', describe: 'Read-interface base URL incl. path prefix, or "sandbox"' })
    .option('explorer-url', { type: 'string', describe: 'Explorer base URL (NFT holdings)' })
    .option('destination', { alias: 'd', type: 'string', describe: 'Output: s3://bucket/prefix or a local directory' })
    .option('format', { type: 'string', choices: ['parquet', 'ndjson'], describe: 'Output format' })
    .option('compression', { type: 'string', choices: ['zstd', 'snappy', 'gzip', 'none'], describe: 'Compression' })
    .option('parquet-engine', { type: 'string', choices: ['duckdb', 'hyparquet'], describe: 'Parquet writer' })
    .option('partitioning', { type: 'string', describe: 'Folder template, e.g. "{dataset}/chain_id={chain_id}/date={date}"' })
    .option('max-rows-per-file', { type: 'number', describe: 'Roll over to a new file after this many rows' })
    .option('max-bytes-per-file', { type: 'string', describe: 'Roll over after about this size, e.g. 256MB' })
    .option('requests-in-flight', { type: 'number', describe: 'Concurrent requests' })
    .option('units-in-flight', { type: 'number', describe: 'Concurrent windows' })
    .option('requests-per-second', { type: 'number', describe: 'Request budget for the whole run (0 = unlimited)' })
    .option('max-attempts', { type: 'number', describe: 'Attempts per request, retries included' })
    .option('timeout', { type: 'string', describe: 'Per-request timeout, e.g. 30s' })
    .option('staging-dir', { type: 'string', describe: 'Local directory for files being written' })
    .option('log-level', { type: 'string', choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] })
    .option('s3-endpoint', { type: 'string', describe: 'S3-compatible endpoint (radosgw, MinIO ...)' })
    .option('region', { type: 'string', describe: 'AWS region' })
    .option('s3-retry-budget', { type: 'string', describe: 'How long S3 operations are retried while the store is unreachable, e.g. 30s' });
}

export interface ConfigArgs {
  config?: string | undefined;
  'base-url'?: string | undefined;
  'explorer-url'?: string | undefined;
  destination?: string | undefined;
  format?: string | undefined;
  compression?: string | undefined;
  'parquet-engine'?: string | undefined;
  partitioning?: string | undefined;
  'max-rows-per-file'?: number | undefined;
  'max-bytes-per-file'?: string | undefined;
  'requests-in-flight'?: number | undefined;
  'units-in-flight'?: number | undefined;
  'requests-per-second'?: number | undefined;
  'max-attempts'?: number | undefined;
  timeout?: string | undefined;
  'staging-dir'?: string | undefined;
  'log-level'?: string | undefined;
  's3-endpoint'?: string | undefined;
  region?: string | undefined;
  's3-retry-budget'?: string | undefined;
}

export function cliFlags(a: ConfigArgs): CliFlags {
  const flags: CliFlags = {
    baseUrl: a['base-url'],
    explorerUrl: a['explorer-url'],
    destination: a.destination,
    format: a.format,
    compression: a.compression,
    parquetEngine: a['parquet-engine'],
    partitioning: a.partitioning,
    maxRowsPerFile: a['max-rows-per-file'],
    maxBytesPerFile: a['max-bytes-per-file'],
    requestsInFlight: a['requests-in-flight'],
    unitsInFlight: a['units-in-flight'],
    requestsPerSecond: a['requests-per-second'],
    maxAttempts: a['max-attempts'],
    timeout: a.timeout,
    stagingDir: a['staging-dir'],
    logLevel: a['log-level'],
    s3Endpoint: a['s3-endpoint'],
    region: a.region,
    s3RetryBudget: a['s3-retry-budget'],
  };
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) as CliFlags;
}

export interface JobContext {
  job: Job;
  config: ResolvedConfig;
  logger: Logger;
}

/** Loads the job and resolves the configuration once: defaults < config file < env < job < flags. */
export async function loadJobContext(jobFile: string, args: ConfigArgs, require: ('source' | 'destination')[]): Promise<JobContext> {
  const job = await loadJob(jobFile);
  const config = resolveConfig({ job, cliFlags: cliFlags(args), configFile: args.config, require });
  const logger = createLogger({ level: config.logLevel });
  for (const w of job.warnings) logger.warn({ file: w.file, line: w.line, field: w.field }, w.message);
  return { job, config, logger };
}
