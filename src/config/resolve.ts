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
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { UserInputError } from '../errors.js';
import { FileProblemsError, type FileProblem } from '../job/errors.js';
import { issuesToProblems } from '../job/issues.js';
import { partitioningUses } from '../sink/partitioning.js';
import { jobDatasets, type Job } from '../job/schema.js';
import { type ConcurrencySettings, type OutputSettings, type RetrySettings } from '../job/settings.js';
import { SANDBOX, type Destination } from '../job/values.js';
import { dropEmptySections, parseYaml } from '../job/yaml-doc.js';
import { compressionAllowed, compressionsList, defaultCompression } from '../sink/formats.js';
import type { Compression, OutputFormat, ParquetEngine } from '../sink/sink.js';
import { Secret } from './secret.js';
import { ownPackage } from '../package-root.js';
import { camelFlag, SETTING_LIST, SETTINGS, type CliFlags, type LogFormat, type LogLevel, type Setting } from './settings.js';

export { ENV_VARS, LOG_FORMATS, LOG_LEVELS, type CliFlags, type LogFormat, type LogLevel } from './settings.js';

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
  logFormat: LogFormat;
  /** The config file read, or null. */
  configFile: string | null;
  /** Which layer set each value: "default", "config <file>", "env <VAR>", "job <file>", "flag --<name>". */
  origins: Readonly<Record<string, string>>;
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

/** The config file shipped with the package: config/default.yaml beside its package.json. */
export const PACKAGED_CONFIG_FILE = path.join(
  ownPackage()?.dir ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  'config',
  'default.yaml',
);

/** The settings a config file may hold, each at its file key (section.field or a top-level field). */
const IN_CONFIG_FILE = SETTING_LIST.filter(
  (s): s is Setting & { file: NonNullable<Setting['file']> } => s.places.includes('config') && !!s.file,
);
const fileKeyOf = (s: Setting) => s.fileKey ?? s.key;
const SECTIONS = [...new Set(IN_CONFIG_FILE.flatMap((s) => (fileKeyOf(s).includes('.') ? [fileKeyOf(s).split('.')[0]!] : [])))];

function configFileSchema(cwd: string) {
  const shape: Record<string, z.ZodType> = { $schema: z.string().optional() };
  const sections: Record<string, Record<string, z.ZodType>> = {};
  for (const s of IN_CONFIG_FILE) {
    const field = s.file(cwd).optional().describe(s.doc);
    const [section, name] = fileKeyOf(s).split('.');
    if (name === undefined) shape[section!] = field;
    else (sections[section!] ??= {})[name] = field;
  }
  for (const [name, fields] of Object.entries(sections)) shape[name] = z.strictObject(fields).optional();
  return z.strictObject(shape).describe('insight-export configuration (defaults for every job).');
}

/** One layer: setting key -> value. */
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
  const r = schema.safeParse(dropEmptySections(doc.value, SECTIONS));
  if (!r.success) throw new ConfigFileError(issuesToProblems(r.error.issues, { doc, schema }));
  const c = r.data as Record<string, unknown>;
  for (const s of IN_CONFIG_FILE) {
    const [section, name] = fileKeyOf(s).split('.');
    const v = name === undefined ? c[section!] : (c[section!] as Record<string, unknown> | undefined)?.[name];
    if (v !== undefined) layer.set(s.key, v);
  }
  return layer;
}

type Problem = { where: string; message: string; hint?: string | undefined };

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

/** The values set so far, which layer set each, and the problems found. */
class Layers {
  readonly values = new Map<string, unknown>();
  readonly origins: Record<string, string> = {};
  readonly problems: Problem[] = [];

  constructor(readonly cwd: string) {}

  apply(layer: Layer, origin: string): void {
    for (const [k, v] of layer) {
      this.values.set(k, v);
      this.origins[k] = origin;
    }
  }

  /** A value from the environment or a flag, parsed by its setting's parser. */
  fromString(s: Setting, raw: unknown, origin: string, where: string): void {
    const r = s.parse(raw, this.cwd);
    if (r.ok) this.apply(new Map([[s.key, r.value]]), origin);
    else this.problems.push({ where: r.secret ? where : `${where}=${JSON.stringify(String(raw))}`, message: r.problem, hint: r.hint });
  }

  get<T>(key: string): T {
    return this.values.get(key) as T;
  }

  originOf(key: string): string {
    return this.origins[key] ?? 'default';
  }
}

/** The settings each layer may set (config_file is read before the layers; secrets apart). */
const LAYERED = SETTING_LIST.filter((s) => s.places.includes('config'));

function applyDefaults(layers: Layers): void {
  layers.apply(new Map(LAYERED.flatMap((s) => (s.default ? [[s.key, s.default()] as const] : []))), 'default');
}

function applyConfigFile(layers: Layers, input: ResolveConfigInput, env: Record<string, string | undefined>): string | null {
  if (input.configFile === null) return null;
  const named = input.configFile ?? (SETTINGS.config_file.env.map((name) => env[name]?.trim()).find(Boolean) || undefined);
  const configFile = named ?? (existsSync(PACKAGED_CONFIG_FILE) ? PACKAGED_CONFIG_FILE : null);
  if (configFile) layers.apply(readConfigFile(configFile, layers.cwd), `config ${configFile}`);
  return configFile;
}

/** In each setting's env order: a later variable of the same setting wins. */
function applyEnvironment(layers: Layers, env: Record<string, string | undefined>): void {
  for (const s of LAYERED) {
    for (const name of s.env ?? []) {
      const raw = env[name];
      if (raw !== undefined && raw.trim() !== '') layers.fromString(s, raw, `env ${name}`, name);
    }
  }
}

function applyFlags(layers: Layers, flags: CliFlags = {}): void {
  for (const s of LAYERED) {
    if (!s.flag) continue;
    const raw = (flags as Record<string, unknown>)[camelFlag(s.flag.name)];
    if (raw !== undefined && raw !== '') layers.fromString(s, raw, `flag --${s.flag.name}`, `--${s.flag.name}`);
  }
}

/** Secrets: environment only, held in Secrets. */
function secrets(layers: Layers, env: Record<string, string | undefined>): ResolvedConfig['auth'] {
  const secret = (s: Setting): Secret | null => {
    for (const name of [...(s.env ?? [])].reverse()) {
      const v = env[name]?.trim();
      if (!v) continue;
      layers.origins[s.key] = `env ${name}`;
      return new Secret(v);
    }
    return null;
  };
  return { clientId: secret(SETTINGS['auth.client_id']), secretKey: secret(SETTINGS['auth.secret_key']) };
}

/** The compression of the format when no layer set one. */
function compressionOf(layers: Layers, format: OutputFormat): Compression {
  const set = layers.get<Compression | undefined>('output.compression');
  if (set !== undefined) return set;
  layers.origins['output.compression'] = `default for ${format}`;
  return defaultCompression(format);
}

/** Rules across settings (and layers): validated once, after every layer. */
function checkAcrossSettings(layers: Layers, input: ResolveConfigInput, format: OutputFormat, compression: Compression): void {
  const { problems } = layers;
  if (!compressionAllowed(format, compression)) {
    problems.push({
      where: `output.compression=${compression} (${layers.originOf('output.compression')})`,
      message: `is not available for NDJSON (output.format from ${layers.originOf('output.format')})`,
      hint: `NDJSON files are ${compressionsList('ndjson')}`,
    });
  }
  const partitioning = layers.get<string>('output.partitioning');
  if (input.job && jobDatasets(input.job).length > 1 && !partitioningUses(partitioning, 'dataset')) {
    problems.push({
      where: `output.partitioning=${JSON.stringify(partitioning)} (${layers.originOf('output.partitioning')})`,
      message: 'has no {dataset} but the job exports several datasets',
      hint: 'files of different datasets have different columns: keep them in different folders',
    });
  }
  if (input.require?.includes('source') && !layers.get('source.base_url')) {
    problems.push({
      where: 'source.base_url',
      message: 'is not set',
      hint: 'set source.base_url in the job ("sandbox" for the built-in sandbox), INSIGHT_BASE_URL, or --base-url',
    });
  }
  if (input.require?.includes('destination') && !layers.get('output.destination')) {
    problems.push({
      where: 'output.destination',
      message: 'is not set',
      hint: 'set output.destination in the job ("s3://bucket/prefix" or "./out"), INSIGHT_EXPORT_DESTINATION, or --destination',
    });
  }
}

function throwProblems(problems: Problem[]): void {
  if (!problems.length) return;
  const lines = problems.flatMap((p) => [`${p.where}: ${p.message}`, ...(p.hint ? [`    hint: ${p.hint}`] : [])]);
  throw new ConfigError(
    problems.length === 1 ? `${problems[0]!.where}: ${problems[0]!.message}` : `${problems.length} configuration problems`,
    {
      metaMessages: problems.length === 1 ? [] : lines,
      hint: problems.length === 1 ? problems[0]!.hint : undefined,
    },
  );
}

export function resolveConfig(input: ResolveConfigInput = {}): ResolvedConfig {
  const env = input.env ?? process.env;
  const layers = new Layers(input.cwd ?? process.cwd());
  applyDefaults(layers);
  const configFile = applyConfigFile(layers, input, env);
  applyEnvironment(layers, env);
  if (input.job) layers.apply(jobLayer(input.job), `job ${input.job.jobFile}`);
  applyFlags(layers, input.cliFlags);
  const auth = secrets(layers, env);
  const format = layers.get<OutputFormat>('output.format');
  const compression = compressionOf(layers, format);
  checkAcrossSettings(layers, input, format, compression);
  throwProblems(layers.problems);

  const get = <T>(key: string): T => layers.get<T>(key);
  const baseUrl = get<string | undefined>('source.base_url') ?? null;
  const endpoint = get<string | undefined>('s3.endpoint') ?? null;
  const cfg: ResolvedConfig = {
    source: { baseUrl, sandbox: baseUrl === SANDBOX, explorerUrl: get<string | undefined>('source.explorer_url') ?? null },
    auth,
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
      parquetEngine: get<ParquetEngine>('output.parquet_engine'),
      destination: get<Destination | undefined>('output.destination') ?? null,
      partitioning: get('output.partitioning'),
      maxRowsPerFile: get('output.max_rows_per_file'),
      maxBytesPerFile: get('output.max_bytes_per_file'),
    },
    stagingDir: get('staging_dir'),
    logLevel: get<LogLevel>('log_level'),
    logFormat: get<LogFormat>('log_format'),
    configFile,
    origins: layers.origins,
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
    ['log_format', cfg.logFormat, o('log_format')],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  return [`config file: ${cfg.configFile ?? '(none)'}`, ...rows.map(([k, v, from]) => `${k.padEnd(width)}  ${v}  [${from}]`)].join('\n');
}
