/**
 * Configuration flows one way and is resolved once:
 *
 *   code defaults < config file < environment < job file < CLI flags
 *
 * The config file is `config/default.yaml` of the package, or the file named by `--config` /
 * INSIGHT_EXPORT_CONFIG (which then replaces it). Secrets (INSIGHT_CLIENT_ID, INSIGHT_SECRET_KEY)
 * come only from the environment and are held in `Secret`s; S3 credentials stay in the AWS
 * default chain and never pass through here. The result is deeply frozen and remembers which
 * layer set each value (`origins`).
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { UserInputError } from '../errors.js';
import { FileProblemsError, type FileProblem } from '../job/errors.js';
import { issuesToProblems } from '../job/issues.js';
import { DEFAULT_PARTITIONING, parsePartitioning, partitioningUses } from '../job/partitioning.js';
import { jobDatasets, type Job } from '../job/schema.js';
import {
  checked,
  concurrencyLayer,
  concurrencySchema,
  COMPRESSIONS,
  NDJSON_COMPRESSIONS,
  OUTPUT_FORMATS,
  outputLayer,
  outputSchema,
  PARQUET_ENGINES,
  REQUESTS_PER_SECOND_RANGE,
  requestsPerSecondInRange,
  retriesLayer,
  retriesSchema,
  type ConcurrencySettings,
  type OutputSettings,
  type RetrySettings,
} from '../job/settings.js';
import { parseBaseUrl, parseByteSize, parseDestination, parseDurationMs, SANDBOX, type Destination, type Parsed } from '../job/values.js';
import { dropEmptySections, parseYaml } from '../job/yaml-doc.js';
import type { Compression, OutputFormat, ParquetEngine } from '../sink/sink.js';
import { Secret } from './secret.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ResolvedConfig {
  source: {
    /** http(s) base URL including its path prefix, "sandbox", or null when no layer set one. */
    baseUrl: string | null;
    /** True when baseUrl is "sandbox": start the built-in sandbox in-process. */
    sandbox: boolean;
    explorerUrl: string | null;
  };
  /** From the environment only. Use `.reveal()` where the header is set, nowhere else. */
  auth: { clientId: Secret | null; secretKey: Secret | null };
  /** Credentials are not here: the AWS SDK's default chain provides them. */
  s3: {
    endpoint: string | null;
    region: string | null;
    forcePathStyle: boolean;
    /** How long an S3 operation is retried (with backoff) while the endpoint is unreachable or answers 5xx. */
    retryBudgetMs: number;
  };
  concurrency: { requestsInFlight: number; unitsInFlight: number; /** 0 = unlimited */ requestsPerSecond: number };
  retries: { maxAttempts: number; timeoutMs: number };
  output: {
    format: OutputFormat;
    compression: Compression;
    parquetEngine: ParquetEngine;
    /** Null when no layer set one (commands that write nothing do not need it). */
    destination: Destination | null;
    partitioning: string;
    maxRowsPerFile: number;
    maxBytesPerFile: number;
  };
  stagingDir: string;
  logLevel: LogLevel;
  /** The config file read, or null. */
  configFile: string | null;
  /** Which layer set each value: "default", "config <file>", "env <VAR>", "job <file>", "flag --<name>". */
  origins: Readonly<Record<string, string>>;
}

/** CLI flags the config knows; yargs may hand numbers as strings. */
export interface CliFlags {
  baseUrl?: string;
  explorerUrl?: string;
  destination?: string;
  format?: string;
  compression?: string;
  parquetEngine?: string;
  partitioning?: string;
  maxRowsPerFile?: number | string;
  maxBytesPerFile?: number | string;
  requestsInFlight?: number | string;
  unitsInFlight?: number | string;
  requestsPerSecond?: number | string;
  maxAttempts?: number | string;
  timeout?: string;
  stagingDir?: string;
  logLevel?: string;
  s3Endpoint?: string;
  region?: string;
  s3RetryBudget?: string;
}

export interface ResolveConfigInput {
  /** Default: process.env. */
  env?: Record<string, string | undefined>;
  /** A config file path; null = none at all; undefined = INSIGHT_EXPORT_CONFIG, else the packaged config/default.yaml. */
  configFile?: string | null;
  job?: Job | null;
  cliFlags?: CliFlags;
  /** Relative paths (destination, staging dir, config file) are taken from here. Default: process.cwd(). */
  cwd?: string;
  /** Fail unless these are set by some layer. */
  require?: ('source' | 'destination')[];
}

/** Environment variables read by the config (secrets included). */
export const ENV_VARS = {
  INSIGHT_EXPORT_CONFIG: 'config file replacing config/default.yaml',
  INSIGHT_BASE_URL: 'source.base_url',
  INSIGHT_EXPLORER_URL: 'source.explorer_url',
  INSIGHT_CLIENT_ID: 'auth: x-client-id (secret)',
  INSIGHT_SECRET_KEY: 'auth: x-secret-key (secret)',
  S3_ENDPOINT: 's3.endpoint (wins over AWS_ENDPOINT_URL_S3)',
  AWS_ENDPOINT_URL_S3: 's3.endpoint',
  AWS_REGION: 's3.region (else AWS_DEFAULT_REGION)',
  INSIGHT_EXPORT_S3_RETRY_BUDGET: 's3.retry_budget',
  INSIGHT_EXPORT_DESTINATION: 'output.destination',
  INSIGHT_EXPORT_REQUESTS_IN_FLIGHT: 'concurrency.requests_in_flight',
  INSIGHT_EXPORT_UNITS_IN_FLIGHT: 'concurrency.units_in_flight',
  INSIGHT_EXPORT_REQUESTS_PER_SECOND: 'concurrency.requests_per_second',
  INSIGHT_EXPORT_MAX_ATTEMPTS: 'retries.max_attempts',
  INSIGHT_EXPORT_TIMEOUT: 'retries.timeout',
  INSIGHT_EXPORT_STAGING_DIR: 'staging_dir',
  INSIGHT_EXPORT_LOG_LEVEL: 'log_level',
} as const;

/** Bad configuration from the environment or CLI flags. */
export class ConfigError extends UserInputError {
  override name = 'ConfigError';
}

/** A config file that is not valid; every problem names file:line:column and field. */
export class ConfigFileError extends FileProblemsError {
  override name = 'ConfigFileError';
  constructor(problems: FileProblem[]) {
    super(problems, 'config file');
  }
}

const DEFAULTS = {
  requests_in_flight: 8,
  units_in_flight: 4,
  requests_per_second: 0,
  max_attempts: 6,
  timeout_ms: 30_000,
  s3_retry_budget_ms: 30_000,
  format: 'parquet' as OutputFormat,
  parquet_engine: 'duckdb' as ParquetEngine,
  partitioning: DEFAULT_PARTITIONING,
  max_rows_per_file: 1_000_000,
  max_bytes_per_file: 512_000_000,
  log_level: 'info' as LogLevel,
};

/** The config file shipped with the package (src/config or dist/config -> ../../config). */
export const PACKAGED_CONFIG_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config/default.yaml');

function configFileSchema(cwd: string) {
  return z
    .strictObject({
      $schema: z.string().optional(),
      source: z
        .strictObject({
          base_url: checked(z.string(), (v) => parseBaseUrl(v, true)).optional(),
          explorer_url: checked(z.string(), (v) => parseBaseUrl(v, false)).optional(),
        })
        .optional(),
      s3: z
        .strictObject({
          endpoint: checked(z.string(), (v) => parseBaseUrl(v, false)).optional(),
          region: z.string().min(1).optional(),
          retry_budget: checked(z.string(), positiveDurationMs).optional(),
        })
        .optional(),
      concurrency: concurrencySchema.optional(),
      retries: retriesSchema.optional(),
      output: outputSchema(cwd).optional(),
      staging_dir: z.string().min(1).optional(),
      log_level: z.enum(LOG_LEVELS).optional(),
    })
    .describe('insight-export configuration (defaults for every job).');
}

/** One layer: dotted snake_case keys -> value. */
type Layer = Map<string, unknown>;

function layerFrom(prefix: string, obj: Record<string, unknown>, into: Layer) {
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) into.set(prefix ? `${prefix}.${k}` : k, v);
}

function readConfigFile(file: string, cwd: string): Layer {
  let text: string;
  try {
    text = readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (err) {
    throw new ConfigFileError([
      { file, line: 1, column: 1, field: '', message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` },
    ]);
  }
  const doc = parseYaml(text, file);
  if (doc.syntaxProblems.length) throw new ConfigFileError(doc.syntaxProblems);
  const layer: Layer = new Map();
  if (doc.value === undefined || doc.value === null) return layer;
  const schema = configFileSchema(cwd);
  const r = schema.safeParse(dropEmptySections(doc.value, ['source', 's3', 'concurrency', 'retries', 'output']));
  if (!r.success) throw new ConfigFileError(issuesToProblems(r.error.issues, { doc, schema }));
  const c = r.data;
  layerFrom('source', c.source ?? {}, layer);
  const { retry_budget, ...s3 } = c.s3 ?? {};
  layerFrom('s3', s3, layer);
  if (retry_budget !== undefined) layer.set('s3.retry_budget_ms', retry_budget);
  layerFrom('concurrency', concurrencyLayer(c.concurrency), layer);
  layerFrom('retries', retriesLayer(c.retries), layer);
  layerFrom('output', outputLayer(c.output), layer);
  if (c.staging_dir) layer.set('staging_dir', path.resolve(cwd, c.staging_dir));
  if (c.log_level) layer.set('log_level', c.log_level);
  return layer;
}

type Problem = { where: string; message: string; hint?: string | undefined };

function intIn(min: number, max: number) {
  return (v: unknown): Parsed<number> => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) return { ok: false, problem: `is not a whole number from ${min} to ${max}` };
    return { ok: true, value: n };
  };
}

function nonNegative(v: unknown): Parsed<number> {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0) return { ok: false, problem: 'is not a number >= 0' };
  return { ok: true, value: n };
}

function requestsPerSecond(v: unknown): Parsed<number> {
  const r = nonNegative(v);
  return r.ok && !requestsPerSecondInRange(r.value) ? { ok: false, problem: REQUESTS_PER_SECOND_RANGE } : r;
}

function oneOf<T extends string>(values: readonly T[]) {
  return (v: unknown): Parsed<T> =>
    typeof v === 'string' && (values as readonly string[]).includes(v.trim())
      ? { ok: true, value: v.trim() as T }
      : { ok: false, problem: `is not one of ${values.join(', ')}` };
}

function positiveDurationMs(v: unknown): Parsed<number> {
  const r = parseDurationMs(v);
  return r.ok && r.value === 0 ? { ok: false, problem: 'must be longer than 0' } : r;
}

function anyString(v: unknown): Parsed<string> {
  return typeof v === 'string' && v.trim() !== '' ? { ok: true, value: v.trim() } : { ok: false, problem: 'is empty' };
}

/** Environment and CLI values are strings: each key has its parser. */
function parsersFor(cwd: string): Record<string, (v: unknown) => Parsed<unknown>> {
  return {
    'source.base_url': (v) => parseBaseUrl(v, true),
    'source.explorer_url': (v) => parseBaseUrl(v, false),
    's3.endpoint': (v) => parseBaseUrl(v, false),
    's3.region': anyString,
    's3.retry_budget_ms': positiveDurationMs,
    'concurrency.requests_in_flight': intIn(1, 1024),
    'concurrency.units_in_flight': intIn(1, 1024),
    'concurrency.requests_per_second': requestsPerSecond,
    'retries.max_attempts': intIn(1, 100),
    'retries.timeout_ms': positiveDurationMs,
    'output.format': oneOf(OUTPUT_FORMATS),
    'output.compression': oneOf(COMPRESSIONS),
    'output.parquet_engine': oneOf(PARQUET_ENGINES),
    'output.destination': (v) => parseDestination(v, cwd),
    'output.partitioning': parsePartitioning,
    'output.max_rows_per_file': intIn(1, Number.MAX_SAFE_INTEGER),
    'output.max_bytes_per_file': (v) => parseByteSize(typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v),
    staging_dir: (v) =>
      typeof v === 'string' && v.trim() ? { ok: true, value: path.resolve(cwd, v.trim()) } : { ok: false, problem: 'is empty' },
    log_level: oneOf(LOG_LEVELS),
  };
}

const ENV_KEYS: [string, string][] = [
  ['INSIGHT_BASE_URL', 'source.base_url'],
  ['INSIGHT_EXPLORER_URL', 'source.explorer_url'],
  ['AWS_DEFAULT_REGION', 's3.region'],
  ['AWS_REGION', 's3.region'],
  ['AWS_ENDPOINT_URL_S3', 's3.endpoint'],
  ['S3_ENDPOINT', 's3.endpoint'],
  ['INSIGHT_EXPORT_S3_RETRY_BUDGET', 's3.retry_budget_ms'],
  ['INSIGHT_EXPORT_DESTINATION', 'output.destination'],
  ['INSIGHT_EXPORT_REQUESTS_IN_FLIGHT', 'concurrency.requests_in_flight'],
  ['INSIGHT_EXPORT_UNITS_IN_FLIGHT', 'concurrency.units_in_flight'],
  ['INSIGHT_EXPORT_REQUESTS_PER_SECOND', 'concurrency.requests_per_second'],
  ['INSIGHT_EXPORT_MAX_ATTEMPTS', 'retries.max_attempts'],
  ['INSIGHT_EXPORT_TIMEOUT', 'retries.timeout_ms'],
  ['INSIGHT_EXPORT_STAGING_DIR', 'staging_dir'],
  ['INSIGHT_EXPORT_LOG_LEVEL', 'log_level'],
];

const FLAG_KEYS: [keyof CliFlags, string, string][] = [
  ['baseUrl', 'source.base_url', '--base-url'],
  ['explorerUrl', 'source.explorer_url', '--explorer-url'],
  ['s3Endpoint', 's3.endpoint', '--s3-endpoint'],
  ['region', 's3.region', '--region'],
  ['s3RetryBudget', 's3.retry_budget_ms', '--s3-retry-budget'],
  ['requestsInFlight', 'concurrency.requests_in_flight', '--requests-in-flight'],
  ['unitsInFlight', 'concurrency.units_in_flight', '--units-in-flight'],
  ['requestsPerSecond', 'concurrency.requests_per_second', '--requests-per-second'],
  ['maxAttempts', 'retries.max_attempts', '--max-attempts'],
  ['timeout', 'retries.timeout_ms', '--timeout'],
  ['format', 'output.format', '--format'],
  ['compression', 'output.compression', '--compression'],
  ['parquetEngine', 'output.parquet_engine', '--parquet-engine'],
  ['destination', 'output.destination', '--destination'],
  ['partitioning', 'output.partitioning', '--partitioning'],
  ['maxRowsPerFile', 'output.max_rows_per_file', '--max-rows-per-file'],
  ['maxBytesPerFile', 'output.max_bytes_per_file', '--max-bytes-per-file'],
  ['stagingDir', 'staging_dir', '--staging-dir'],
  ['logLevel', 'log_level', '--log-level'],
];

function jobLayer(job: Job): Layer {
  const layer: Layer = new Map();
  if (job.source.base_url) layer.set('source.base_url', job.source.base_url);
  if (job.source.explorer_url) layer.set('source.explorer_url', job.source.explorer_url);
  layerFrom('concurrency', job.concurrency as Partial<ConcurrencySettings>, layer);
  layerFrom('retries', job.retries as Partial<RetrySettings>, layer);
  layerFrom('output', job.output as Partial<OutputSettings>, layer);
  return layer;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !(o instanceof Secret) && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

export function resolveConfig(input: ResolveConfigInput = {}): ResolvedConfig {
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const parsers = parsersFor(cwd);
  const values = new Map<string, unknown>();
  const origins: Record<string, string> = {};
  const problems: Problem[] = [];
  const apply = (layer: Layer, origin: string) => {
    for (const [k, v] of layer) {
      values.set(k, v);
      origins[k] = origin;
    }
  };
  const fromStrings = (key: string, raw: unknown, origin: string, where: string) => {
    const r = parsers[key]!(raw);
    if (r.ok) apply(new Map([[key, r.value]]), origin);
    else problems.push({ where: r.secret ? where : `${where}=${JSON.stringify(String(raw))}`, message: r.problem, hint: r.hint });
  };

  // 1. code defaults
  apply(
    new Map<string, unknown>([
      ['concurrency.requests_in_flight', DEFAULTS.requests_in_flight],
      ['concurrency.units_in_flight', DEFAULTS.units_in_flight],
      ['concurrency.requests_per_second', DEFAULTS.requests_per_second],
      ['retries.max_attempts', DEFAULTS.max_attempts],
      ['retries.timeout_ms', DEFAULTS.timeout_ms],
      ['s3.retry_budget_ms', DEFAULTS.s3_retry_budget_ms],
      ['output.format', DEFAULTS.format],
      ['output.parquet_engine', DEFAULTS.parquet_engine],
      ['output.partitioning', DEFAULTS.partitioning],
      ['output.max_rows_per_file', DEFAULTS.max_rows_per_file],
      ['output.max_bytes_per_file', DEFAULTS.max_bytes_per_file],
      ['staging_dir', path.join(os.tmpdir(), 'insight-export')],
      ['log_level', DEFAULTS.log_level],
    ]),
    'default',
  );

  // 2. config file
  let configFile: string | null = null;
  if (input.configFile !== null) {
    const named = input.configFile ?? (env.INSIGHT_EXPORT_CONFIG?.trim() || undefined);
    if (named) configFile = named;
    else if (existsSync(PACKAGED_CONFIG_FILE)) configFile = PACKAGED_CONFIG_FILE;
    if (configFile) apply(readConfigFile(configFile, cwd), `config ${configFile}`);
  }

  // 3. environment (in ENV_KEYS order: a later variable of the same key wins)
  for (const [name, key] of ENV_KEYS) {
    const raw = env[name];
    if (raw !== undefined && raw.trim() !== '') fromStrings(key, raw, `env ${name}`, name);
  }

  // 4. job file
  if (input.job) apply(jobLayer(input.job), `job ${input.job.jobFile}`);

  // 5. CLI flags
  for (const [flag, key, name] of FLAG_KEYS) {
    const raw = input.cliFlags?.[flag];
    if (raw !== undefined && raw !== '') fromStrings(key, raw, `flag ${name}`, name);
  }

  // Secrets: environment only.
  const secret = (name: string): Secret | null => {
    const v = env[name]?.trim();
    if (!v) return null;
    origins[name === 'INSIGHT_CLIENT_ID' ? 'auth.client_id' : 'auth.secret_key'] = `env ${name}`;
    return new Secret(v);
  };

  const get = <T>(key: string): T => values.get(key) as T;
  const format = get<OutputFormat>('output.format');
  let compression = get<Compression | undefined>('output.compression');
  if (compression === undefined) {
    compression = format === 'parquet' ? 'zstd' : 'gzip';
    origins['output.compression'] = `default for ${format}`;
  }

  // Validated once, across layers.
  const originOf = (k: string) => origins[k] ?? 'default';
  if (format === 'ndjson' && !NDJSON_COMPRESSIONS.includes(compression)) {
    problems.push({
      where: `output.compression=${compression} (${originOf('output.compression')})`,
      message: `is not available for NDJSON (output.format from ${originOf('output.format')})`,
      hint: 'NDJSON files are gzip or none',
    });
  }
  const partitioning = get<string>('output.partitioning');
  if (input.job && jobDatasets(input.job).length > 1 && !partitioningUses(partitioning, 'dataset')) {
    problems.push({
      where: `output.partitioning=${JSON.stringify(partitioning)} (${originOf('output.partitioning')})`,
      message: 'has no {dataset} but the job exports several datasets',
      hint: 'files of different datasets have different columns: keep them in different folders',
    });
  }
  const baseUrl = get<string | undefined>('source.base_url') ?? null;
  const destination = get<Destination | undefined>('output.destination') ?? null;
  if (input.require?.includes('source') && !baseUrl) {
    problems.push({
      where: 'source.base_url',
      message: 'is not set',
      hint: 'set source.base_url in the job ("sandbox" for the built-in sandbox), INSIGHT_BASE_URL, or --base-url',
    });
  }
  if (input.require?.includes('destination') && !destination) {
    problems.push({
      where: 'output.destination',
      message: 'is not set',
      hint: 'set output.destination in the job ("s3://bucket/prefix" or "./out"), INSIGHT_EXPORT_DESTINATION, or --destination',
    });
  }
  if (problems.length) {
    const lines = problems.flatMap((p) => [`${p.where}: ${p.message}`, ...(p.hint ? [`    hint: ${p.hint}`] : [])]);
    throw new ConfigError(
      problems.length === 1 ? `${problems[0]!.where}: ${problems[0]!.message}` : `${problems.length} configuration problems`,
      {
        metaMessages: problems.length === 1 ? [] : lines,
        hint: problems.length === 1 ? problems[0]!.hint : undefined,
      },
    );
  }

  const endpoint = get<string | undefined>('s3.endpoint') ?? null;
  const cfg: ResolvedConfig = {
    source: { baseUrl, sandbox: baseUrl === SANDBOX, explorerUrl: get<string | undefined>('source.explorer_url') ?? null },
    auth: { clientId: secret('INSIGHT_CLIENT_ID'), secretKey: secret('INSIGHT_SECRET_KEY') },
    // A custom endpoint is a non-AWS S3 (radosgw, MinIO ...): path-style addressing.
    s3: {
      endpoint,
      region: get<string | undefined>('s3.region') ?? null,
      forcePathStyle: endpoint !== null,
      retryBudgetMs: get('s3.retry_budget_ms'),
    },
    concurrency: {
      requestsInFlight: get('concurrency.requests_in_flight'),
      unitsInFlight: get('concurrency.units_in_flight'),
      requestsPerSecond: get('concurrency.requests_per_second'),
    },
    retries: { maxAttempts: get('retries.max_attempts'), timeoutMs: get('retries.timeout_ms') },
    output: {
      format,
      compression,
      parquetEngine: get('output.parquet_engine'),
      destination,
      partitioning,
      maxRowsPerFile: get('output.max_rows_per_file'),
      maxBytesPerFile: get('output.max_bytes_per_file'),
    },
    stagingDir: get('staging_dir'),
    logLevel: get('log_level'),
    configFile,
    origins,
  };
  return deepFreeze(cfg);
}

/** Human-readable listing, one setting a line with where it came from; secrets are never shown. */
export function describeConfig(cfg: ResolvedConfig): string {
  const o = (k: string) => cfg.origins[k] ?? 'default';
  const show = (v: unknown) => (v === null || v === undefined ? '(not set)' : typeof v === 'string' ? v : JSON.stringify(v));
  const secret = (s: Secret | null) => (s ? '[redacted]' : '(not set)');
  const rows: [string, string, string][] = [
    ['source.base_url', show(cfg.source.baseUrl), o('source.base_url')],
    ['source.explorer_url', show(cfg.source.explorerUrl), o('source.explorer_url')],
    ['auth.client_id', secret(cfg.auth.clientId), o('auth.client_id')],
    ['auth.secret_key', secret(cfg.auth.secretKey), o('auth.secret_key')],
    ['s3.endpoint', show(cfg.s3.endpoint), o('s3.endpoint')],
    ['s3.region', show(cfg.s3.region), o('s3.region')],
    ['s3.force_path_style', show(cfg.s3.forcePathStyle), 'derived from s3.endpoint'],
    ['s3.retry_budget', `${cfg.s3.retryBudgetMs}ms`, o('s3.retry_budget_ms')],
    ['concurrency.requests_in_flight', show(cfg.concurrency.requestsInFlight), o('concurrency.requests_in_flight')],
    ['concurrency.units_in_flight', show(cfg.concurrency.unitsInFlight), o('concurrency.units_in_flight')],
    [
      'concurrency.requests_per_second',
      cfg.concurrency.requestsPerSecond === 0 ? '0 (unlimited)' : show(cfg.concurrency.requestsPerSecond),
      o('concurrency.requests_per_second'),
    ],
    ['retries.max_attempts', show(cfg.retries.maxAttempts), o('retries.max_attempts')],
    ['retries.timeout', `${cfg.retries.timeoutMs}ms`, o('retries.timeout_ms')],
    ['output.format', cfg.output.format, o('output.format')],
    ['output.compression', cfg.output.compression, o('output.compression')],
    ['output.parquet_engine', cfg.output.parquetEngine, o('output.parquet_engine')],
    ['output.destination', show(cfg.output.destination?.url), o('output.destination')],
    ['output.partitioning', cfg.output.partitioning, o('output.partitioning')],
    ['output.max_rows_per_file', show(cfg.output.maxRowsPerFile), o('output.max_rows_per_file')],
    ['output.max_bytes_per_file', show(cfg.output.maxBytesPerFile), o('output.max_bytes_per_file')],
    ['staging_dir', cfg.stagingDir, o('staging_dir')],
    ['log_level', cfg.logLevel, o('log_level')],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  return [`config file: ${cfg.configFile ?? '(none)'}`, ...rows.map(([k, v, from]) => `${k.padEnd(width)}  ${v}  [${from}]`)].join('\n');
}
