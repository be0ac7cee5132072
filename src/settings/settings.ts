/**
 * Every setting, declared once: its key, CLI flag, environment variables, parsers, default, doc
 * and where it may be set. The yargs options, the environment names, the config file's and the
 * job file's settings fields, the JSON Schema's descriptions, the resolver and the resolved
 * configuration's type all follow this table; a test checks config/default.yaml and the commands
 * against it.
 *
 * Configuration flows one way: defaults < config file < environment < job file < CLI flag.
 */
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parsePartitioning } from './partitioning.js';
import { DEFAULT_PARTITIONING, PARTITION_PLACEHOLDERS } from '../sink/partitioning.js';
import { foreignPathProblem } from '../store/local-path.js';
import {
  BYTE_SIZE_ERROR,
  BYTE_SIZE_PATTERN,
  DURATION_ERROR,
  DURATION_PATTERN,
  parseBaseUrl,
  parseByteSize,
  parseDestination,
  parseDurationMs,
  type Destination,
  type Parsed,
} from './values.js';
import {
  COMPRESSIONS,
  compressionsText,
  DEFAULT_FORMAT,
  defaultCompression,
  DEFAULT_PARQUET_ENGINE,
  OUTPUT_FORMATS,
  PARQUET_ENGINES,
} from '../sink/formats.js';

export const BATCH_WINDOWS = ['on', 'off'] as const;
export type BatchWindows = (typeof BATCH_WINDOWS)[number];
/** Blocks a batch of block windows spans at most (src/run/window-batches.ts): the default block chunk. */
export const BLOCK_BATCH_SPAN = 10_000;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Where a setting may be given. */
export type SettingPlace = 'config' | 'env' | 'job' | 'flag';
/**
 * Which commands take a setting's flag: every job command, the read commands (resolve, decode,
 * nfts), run alone, the commands that write (run, compact, expire-snapshots, remove-orphan-files),
 * or the commands that remove an Iceberg table's history (expire-snapshots, remove-orphan-files).
 */
export type FlagGroup = 'job' | 'source' | 'run' | 'write' | 'history';

export interface Setting {
  /** Dotted key of the resolved setting, as `insight-export config` and `origins` name it. */
  key: string;
  /** The key in config and job files when it differs (a unit suffix the file leaves out). */
  fileKey?: string;
  /** The flag without its dashes, and the commands that take it. */
  flag?: { name: string; type: 'string' | 'number' | 'boolean'; alias?: string; for: readonly FlagGroup[]; choices?: readonly string[] };
  /** Environment variables, in precedence order: a later one wins. */
  env?: readonly string[];
  /** Environment only, never echoed nor written anywhere. */
  secret?: boolean;
  /** Parses a value from the environment or a flag (strings; yargs may hand numbers). */
  parse: (raw: unknown, cwd: string) => Parsed<unknown>;
  /** The zod schema of the value in a config or job file, when it may be set there (`jobDir`: the job file's folder). */
  file?: (cwd: string, jobDir?: string) => z.ZodType;
  /** The built-in default, when there is one. */
  default?: () => unknown;
  /** A default that follows another setting's value (its origin reads "default for <that value>"). */
  defaultFrom?: { key: string; value: (other: never) => unknown };
  /** The default as a user would write it, for docs and --help. */
  defaultText?: string;
  /** One line for --help, the JSON Schema and the README. */
  doc: string;
  places: readonly SettingPlace[];
  /** How `insight-export config` shows a value that is set (default: strings as they are, anything else as JSON). */
  show?: (value: never) => string;
}

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

// ---------------------------------------------------------------- parsers of strings (env, flags)

function intIn(min: number, max: number) {
  return (v: unknown): Parsed<number> => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) return { ok: false, problem: `is not a whole number from ${min} to ${max}` };
    return { ok: true, value: n };
  };
}

/** A budget below this paces one request per 100 s or slower: a typo (1e-9), not a plan. */
export const MIN_REQUESTS_PER_SECOND = 0.01;
const MAX_REQUESTS_PER_SECOND = 100_000;
export const REQUESTS_PER_SECOND_RANGE = `must be 0 (unlimited) or from ${MIN_REQUESTS_PER_SECOND} to ${MAX_REQUESTS_PER_SECOND}`;

export function requestsPerSecondInRange(n: number): boolean {
  return n === 0 || (n >= MIN_REQUESTS_PER_SECOND && n <= MAX_REQUESTS_PER_SECOND);
}

function requestsPerSecond(v: unknown): Parsed<number> {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0) return { ok: false, problem: 'is not a number >= 0' };
  return requestsPerSecondInRange(n) ? { ok: true, value: n } : { ok: false, problem: REQUESTS_PER_SECOND_RANGE };
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

function directory(v: unknown, cwd: string): Parsed<string> {
  if (typeof v !== 'string' || !v.trim()) return { ok: false, problem: 'is empty' };
  const foreign = foreignPathProblem(v.trim());
  if (foreign) return { ok: false, problem: foreign, hint: 'write a "/" path, e.g. "/var/tmp/insight-export"' };
  return { ok: true, value: path.resolve(cwd, v.trim()) };
}

/** A range point from a flag: digits are a block number (or unix seconds with `by: time`), anything else a date or "latest"; the job's schema checks it. */
function rangePoint(v: unknown): Parsed<number | string> {
  if (typeof v === 'number') return { ok: true, value: v };
  if (typeof v !== 'string' || v.trim() === '') return { ok: false, problem: 'is empty' };
  const s = v.trim();
  return { ok: true, value: /^\d+$/.test(s) ? Number(s) : s };
}

function milliseconds(ms: number): string {
  return `${ms}ms`;
}

function flagBoolean(v: unknown): Parsed<boolean> {
  return typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, problem: 'is not true or false' };
}

// ---------------------------------------------------------------- the table

const ALL: readonly SettingPlace[] = ['config', 'env', 'job', 'flag'];
const SOURCE_AND_JOB: readonly FlagGroup[] = ['job', 'source'];

export const SETTINGS = {
  config_file: {
    key: 'config_file',
    flag: { name: 'config', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPORT_CONFIG'],
    parse: directory,
    doc: 'Config file replacing the packaged config/default.yaml.',
    places: ['env', 'flag'],
  },
  'source.base_url': {
    key: 'source.base_url',
    flag: { name: 'base-url', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_BASE_URL'],
    parse: (v) => parseBaseUrl(v, true),
    file: () => checked(z.string(), (v) => parseBaseUrl(v, true)),
    doc: 'Read-interface base URL including its path prefix (e.g. "http://127.0.0.1:8787/insights/v1"), or "sandbox" to start the built-in sandbox in-process. Default: config / INSIGHT_BASE_URL.',
    places: ALL,
  },
  'source.explorer_url': {
    key: 'source.explorer_url',
    flag: { name: 'explorer-url', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPLORER_URL'],
    parse: (v) => parseBaseUrl(v, false),
    file: () => checked(z.string(), (v) => parseBaseUrl(v, false)),
    doc: 'Base URL of the explorer pass-through (NFT holdings). Default: config / INSIGHT_EXPLORER_URL.',
    places: ALL,
  },
  'source.settle_horizon_ms': {
    key: 'source.settle_horizon_ms',
    fileKey: 'source.settle_horizon',
    flag: { name: 'settle-horizon', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_SETTLE_HORIZON'],
    parse: parseDurationMs,
    file: () => checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), parseDurationMs),
    default: () => 86_400_000,
    defaultText: '1d',
    show: milliseconds,
    doc: "How long after a block's time the service may still answer differently for it (a lagging replica, a back-fill): a window committed by a run is recounted (one count per window batch and target for up to 55 chains) by the next run, and by later runs until its block time is older than this; a window whose count differs is exported again. Default 1d; 0s: recounted once.",
    places: ALL,
  },
  'auth.client_id': {
    key: 'auth.client_id',
    env: ['INSIGHT_CLIENT_ID'],
    secret: true,
    parse: anyString,
    doc: 'Sent as the x-client-id header (secret: environment only).',
    places: ['env'],
  },
  'auth.secret_key': {
    key: 'auth.secret_key',
    env: ['INSIGHT_SECRET_KEY'],
    secret: true,
    parse: anyString,
    doc: 'Sent as the x-secret-key header (secret: environment only).',
    places: ['env'],
  },
  's3.endpoint': {
    key: 's3.endpoint',
    flag: { name: 's3-endpoint', type: 'string', for: ['job'] },
    env: ['AWS_ENDPOINT_URL_S3', 'S3_ENDPOINT'],
    parse: (v) => parseBaseUrl(v, false),
    file: () => checked(z.string(), (v) => parseBaseUrl(v, false)),
    doc: 'S3-compatible endpoint (radosgw, MinIO ...); S3_ENDPOINT wins over AWS_ENDPOINT_URL_S3.',
    places: ['config', 'env', 'flag'],
  },
  's3.region': {
    key: 's3.region',
    flag: { name: 'region', type: 'string', for: ['job'] },
    env: ['AWS_DEFAULT_REGION', 'AWS_REGION'],
    parse: anyString,
    file: () => z.string().min(1),
    doc: 'AWS region; AWS_REGION wins over AWS_DEFAULT_REGION.',
    places: ['config', 'env', 'flag'],
  },
  's3.retry_budget_ms': {
    key: 's3.retry_budget_ms',
    fileKey: 's3.retry_budget',
    flag: { name: 's3-retry-budget', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_S3_RETRY_BUDGET'],
    parse: positiveDurationMs,
    file: () => checked(z.string(), positiveDurationMs),
    default: () => 30_000,
    defaultText: '30s',
    show: milliseconds,
    doc: 'How long S3 operations are retried while the store is unreachable or answers 5xx, e.g. 30s.',
    places: ['config', 'env', 'flag'],
  },
  'concurrency.requests_in_flight': {
    key: 'concurrency.requests_in_flight',
    flag: { name: 'requests-in-flight', type: 'number', for: ['job'] },
    env: ['INSIGHT_EXPORT_REQUESTS_IN_FLIGHT'],
    parse: intIn(1, 1024),
    file: () => z.number().int().min(1).max(1024),
    default: () => 8,
    defaultText: '8',
    doc: 'Most HTTP requests open at once, over all work units. Default 8.',
    places: ALL,
  },
  'concurrency.units_in_flight': {
    key: 'concurrency.units_in_flight',
    flag: { name: 'units-in-flight', type: 'number', for: ['job'] },
    env: ['INSIGHT_EXPORT_UNITS_IN_FLIGHT'],
    parse: intIn(1, 1024),
    file: () => z.number().int().min(1).max(1024),
    default: () => 4,
    defaultText: '4',
    doc: 'Most work units (dataset x target x chain x window) paging at once; up to two more may be finishing their files (conversion, upload) beside them. Default 4.',
    places: ALL,
  },
  'concurrency.workers': {
    key: 'concurrency.workers',
    flag: { name: 'workers', type: 'number', for: ['run'] },
    env: ['INSIGHT_EXPORT_WORKERS'],
    parse: intIn(1, 256),
    file: () => z.number().int().min(1).max(256),
    default: () => 1,
    defaultText: '1',
    doc: "Shard processes a run starts on this machine, each exporting its share of every unit's windows (as --shard i/N would); their reports are merged into one. requests_per_second is divided between them. Default 1.",
    places: ALL,
  },
  'concurrency.requests_per_second': {
    key: 'concurrency.requests_per_second',
    flag: { name: 'requests-per-second', type: 'number', for: ['job'] },
    env: ['INSIGHT_EXPORT_REQUESTS_PER_SECOND'],
    parse: requestsPerSecond,
    file: () => z.number().min(0).refine(requestsPerSecondInRange, { message: REQUESTS_PER_SECOND_RANGE }),
    default: () => 0,
    defaultText: '0',
    show: (n: number) => (n === 0 ? '0 (unlimited)' : String(n)),
    doc: 'Request budget per second shared by all units; 0 = unlimited (default).',
    places: ALL,
  },
  'retries.max_attempts': {
    key: 'retries.max_attempts',
    flag: { name: 'max-attempts', type: 'number', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPORT_MAX_ATTEMPTS'],
    parse: intIn(1, 100),
    file: () => z.number().int().min(1).max(100),
    default: () => 6,
    defaultText: '6',
    doc: 'Attempts per request (first try included) on 429, 5xx and network errors. Default 6.',
    places: ALL,
  },
  'retries.timeout_ms': {
    key: 'retries.timeout_ms',
    fileKey: 'retries.timeout',
    flag: { name: 'timeout', type: 'string', for: SOURCE_AND_JOB },
    env: ['INSIGHT_EXPORT_TIMEOUT'],
    parse: positiveDurationMs,
    file: () => checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), positiveDurationMs),
    default: () => 30_000,
    defaultText: '30s',
    show: milliseconds,
    doc: 'Time limit of one request, e.g. "30s" (default), "2m".',
    places: ALL,
  },
  'output.format': {
    key: 'output.format',
    flag: { name: 'format', type: 'string', for: ['job'], choices: OUTPUT_FORMATS },
    parse: oneOf(OUTPUT_FORMATS),
    file: () => z.enum(OUTPUT_FORMATS),
    default: () => DEFAULT_FORMAT,
    defaultText: DEFAULT_FORMAT,
    doc: 'File format: "parquet" (default), "ndjson" (one JSON object per line) or "iceberg" (an Iceberg v2 table per dataset table, Parquet data files).',
    places: ['config', 'job', 'flag'],
  },
  'output.compression': {
    key: 'output.compression',
    flag: { name: 'compression', type: 'string', for: ['job'], choices: COMPRESSIONS },
    parse: oneOf(COMPRESSIONS),
    file: () => z.enum(COMPRESSIONS),
    defaultFrom: { key: 'output.format', value: defaultCompression },
    defaultText: 'zstd for Parquet, gzip for NDJSON',
    doc: `Compression: Parquet ${compressionsText('parquet')}; NDJSON ${compressionsText('ndjson')}.`,
    places: ['config', 'job', 'flag'],
  },
  'output.parquet_engine': {
    key: 'output.parquet_engine',
    flag: { name: 'parquet-engine', type: 'string', for: ['job'], choices: PARQUET_ENGINES },
    parse: oneOf(PARQUET_ENGINES),
    file: () => z.enum(PARQUET_ENGINES),
    default: () => DEFAULT_PARQUET_ENGINE,
    defaultText: DEFAULT_PARQUET_ENGINE,
    doc: 'Parquet writer: "duckdb" (default, fastest) or "hyparquet" (pure JavaScript). Ignored for NDJSON.',
    places: ['config', 'job', 'flag'],
  },
  'output.destination': {
    key: 'output.destination',
    flag: { name: 'destination', type: 'string', alias: 'd', for: ['job'] },
    env: ['INSIGHT_EXPORT_DESTINATION'],
    parse: (v, cwd) => parseDestination(v, cwd),
    file: (cwd, jobDir) => checked(z.string(), (v) => parseDestination(v, cwd, jobDir)),
    show: (d: Destination) => d.url,
    doc: 'Where files go: "s3://bucket/prefix" or a local directory ("./out"; a relative path is taken from the working directory of the run; in a job file, "{job_dir}/out" from the job file\'s folder).',
    places: ALL,
  },
  'output.partitioning': {
    key: 'output.partitioning',
    flag: { name: 'partitioning', type: 'string', for: ['job'] },
    parse: parsePartitioning,
    file: () => checked(z.string(), parsePartitioning),
    default: () => DEFAULT_PARTITIONING,
    defaultText: `"${DEFAULT_PARTITIONING}"`,
    doc: `Folder layout of data files under the destination, Hive style. Placeholders: ${PARTITION_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}. Default "${DEFAULT_PARTITIONING}".`,
    places: ['config', 'job', 'flag'],
  },
  'output.max_rows_per_file': {
    key: 'output.max_rows_per_file',
    flag: { name: 'max-rows-per-file', type: 'number', for: ['job'] },
    parse: intIn(1, Number.MAX_SAFE_INTEGER),
    file: () => z.number().int().positive(),
    default: () => 1_000_000,
    defaultText: '1000000',
    doc: 'Start a new file after this many rows. Default 1000000.',
    places: ['config', 'job', 'flag'],
  },
  'output.max_bytes_per_file': {
    key: 'output.max_bytes_per_file',
    flag: { name: 'max-bytes-per-file', type: 'string', for: ['job'] },
    parse: (v) => parseByteSize(typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v),
    file: () =>
      checked(
        z.union([z.number().int().positive(), z.string().regex(new RegExp(BYTE_SIZE_PATTERN), { error: BYTE_SIZE_ERROR })]),
        parseByteSize,
      ),
    default: () => 512_000_000,
    defaultText: '512MB',
    doc: 'Start a new file after about this many bytes: "512MB" (KB/MB/GB = 1000^n), "256MiB" (KiB/MiB/GiB = 1024^n) or a number of bytes. Default "512MB".',
    places: ['config', 'job', 'flag'],
  },
  'output.batch_windows': {
    key: 'output.batch_windows',
    flag: { name: 'batch-windows', type: 'string', for: ['job'], choices: BATCH_WINDOWS },
    parse: oneOf(BATCH_WINDOWS),
    file: () => z.enum(BATCH_WINDOWS),
    default: () => 'on' as BatchWindows,
    defaultText: 'on',
    doc: `"on" (default): consecutive windows of a unit within one UTC day (windows by time) or one span of ${BLOCK_BATCH_SPAN.toLocaleString('en-US')} blocks (by block) are exported as one, written to one file per partition and committed together. "off": every window on its own, in files of its own.`,
    places: ['config', 'job', 'flag'],
  },
  'output.iceberg_commit_interval_ms': {
    key: 'output.iceberg_commit_interval_ms',
    fileKey: 'output.iceberg_commit_interval',
    flag: { name: 'iceberg-commit-interval', type: 'string', for: ['run'] },
    env: ['INSIGHT_EXPORT_ICEBERG_COMMIT_INTERVAL'],
    parse: parseDurationMs,
    file: () => checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), parseDurationMs),
    default: () => 600_000,
    defaultText: '10m',
    show: milliseconds,
    doc: 'output.format iceberg: while a run exports, commit the windows done so far to the tables this often (readers see them as a new snapshot), e.g. 10m (default); "0s": only at the end of the run.',
    places: ALL,
  },
  'output.snapshot_retention_ms': {
    key: 'output.snapshot_retention_ms',
    fileKey: 'output.snapshot_retention',
    flag: { name: 'snapshot-retention', type: 'string', for: ['history'] },
    env: ['INSIGHT_EXPORT_SNAPSHOT_RETENTION'],
    parse: positiveDurationMs,
    file: () => checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), positiveDurationMs),
    default: () => 7 * 86_400_000,
    defaultText: '7d',
    show: milliseconds,
    doc: 'Iceberg tables: how long a snapshot stays readable for time travel after it was committed, e.g. "7d" (default). expire-snapshots removes older snapshots (never the current one) and the files only they name; remove-orphan-files removes only unreferenced files older than this.',
    places: ALL,
  },
  staging_dir: {
    key: 'staging_dir',
    flag: { name: 'staging-dir', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_STAGING_DIR'],
    parse: directory,
    file: (cwd) => checked(z.string().min(1), (v) => directory(v, cwd)),
    default: () => path.join(os.tmpdir(), 'insight-export'),
    defaultText: '<os tmpdir>/insight-export',
    doc: 'Local directory for files being written.',
    places: ['config', 'env', 'flag'],
  },
  stop_grace_ms: {
    key: 'stop_grace_ms',
    fileKey: 'stop_grace',
    flag: { name: 'stop-grace', type: 'string', for: ['run'] },
    env: ['INSIGHT_EXPORT_STOP_GRACE'],
    parse: parseDurationMs,
    file: () => checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), parseDurationMs),
    default: () => 25_000,
    defaultText: '25s',
    show: milliseconds,
    doc: 'After SIGINT/SIGTERM a run sends no new request and commits, for this long, what it has wholly received (batches whose pages are all in, the received part of the others); then it abandons the rest and exits 130. Default 25s, within Kubernetes\' default terminationGracePeriodSeconds (30); "0s" abandons everything in flight at once. A second signal stops at once.',
    places: ['config', 'env', 'flag'],
  },
  log_level: {
    key: 'log_level',
    flag: { name: 'log-level', type: 'string', for: SOURCE_AND_JOB, choices: LOG_LEVELS },
    env: ['INSIGHT_EXPORT_LOG_LEVEL'],
    parse: oneOf(LOG_LEVELS),
    file: () => z.enum(LOG_LEVELS),
    default: (): LogLevel => 'info',
    defaultText: 'info',
    doc: 'Least severe log line written (stderr).',
    places: ['config', 'env', 'flag'],
  },
  log_format: {
    key: 'log_format',
    flag: { name: 'log-format', type: 'string', for: SOURCE_AND_JOB, choices: LOG_FORMATS },
    env: ['INSIGHT_EXPORT_LOG_FORMAT'],
    parse: oneOf(LOG_FORMATS),
    file: () => z.enum(LOG_FORMATS),
    default: (): LogFormat => (process.stderr.isTTY === true ? 'pretty' : 'json'),
    defaultText: 'pretty on a terminal, json otherwise',
    doc: 'Log lines on stderr: "pretty" (for people) or "json" (one object a line, for log collectors).',
    places: ['config', 'env', 'flag'],
  },
  'range.from': {
    key: 'range.from',
    flag: { name: 'from', type: 'string', for: ['run'] },
    parse: rangePoint,
    doc: 'Start (inclusive): a block number, or a UTC date/time.',
    places: ['job', 'flag'],
  },
  'range.to': {
    key: 'range.to',
    flag: { name: 'to', type: 'string', for: ['run'] },
    parse: rangePoint,
    doc: 'End (exclusive): a block number, a UTC date/time, or "latest" (chain head minus safety_lag, for incremental cron runs).',
    places: ['job', 'flag'],
  },
  dry_run: {
    key: 'dry_run',
    flag: { name: 'dry-run', type: 'boolean', for: ['write'] },
    parse: flagBoolean,
    default: () => false,
    defaultText: 'false',
    doc: 'Check and plan everything (job, config, destination, chains) but write nothing; print what would be written.',
    places: ['flag'],
  },
} as const satisfies Record<string, Setting>;

export type SettingKey = keyof typeof SETTINGS;
export const SETTING_LIST: readonly Setting[] = Object.values(SETTINGS);

type Table = typeof SETTINGS;

/** The keys of the settings that may be given at `place`. */
export type SettingKeyIn<P extends SettingPlace> = { [K in SettingKey]: P extends Table[K]['places'][number] ? K : never }[SettingKey];

/** The value a setting holds: what its parser gives. */
export type SettingValue<K extends SettingKey> = Extract<ReturnType<Table[K]['parse']>, { ok: true }>['value'];

/** "output" of "output.format"; never for a top-level key. */
export type SectionOf<K extends string> = K extends `${infer S}.${string}` ? S : never;

/** "base-url" -> "baseUrl", "max_rows_per_file" -> "maxRowsPerFile". */
export type Camel<S extends string> = S extends `${infer H}-${infer T}`
  ? `${H}${Capitalize<Camel<T>>}`
  : S extends `${infer H}_${infer T}`
    ? `${H}${Capitalize<Camel<T>>}`
    : S;

export function camelCase(name: string): string {
  return name.replace(/[-_]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

type FlagName<S> = S extends { flag: { name: infer N extends string } } ? N : never;

/** CLI flags of the layered settings (those a config file may also set), by their camelCase name; yargs may hand numbers as strings. */
export type CliFlags = { [N in FlagName<Table[SettingKeyIn<'config'>]> as Camel<N>]?: string | number };

/** Environment variables read by the configuration (secrets included), with what each sets. */
export const ENV_VARS: Readonly<Record<string, string>> = Object.fromEntries(
  SETTING_LIST.flatMap((s) => (s.env ?? []).map((name) => [name, `${s.fileKey ?? s.key}${s.secret ? ' (secret)' : ''}`])),
);

/** The yargs description of a setting's flag: its doc, environment variables and default. */
export function flagDescription(s: Setting): string {
  const extra = [
    ...(s.env?.length ? [`env ${s.env.join(', ')}`] : []),
    ...(s.defaultText && s.flag?.type !== 'boolean' ? [`default ${s.defaultText}`] : []),
  ];
  return extra.length ? `${s.doc} [${extra.join('; ')}]` : s.doc;
}
