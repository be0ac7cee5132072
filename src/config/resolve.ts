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
import { FileProblemsError, type FileProblem } from '../yaml-file/problems.js';
import { issuesToProblems } from '../yaml-file/issues.js';
import { dropEmptySections, parseYaml } from '../yaml-file/yaml-doc.js';
import { partitioningUses } from '../sink/partitioning.js';
import { fieldPosition } from '../yaml-file/field-place.js';
import { SANDBOX } from '../settings/values.js';
import { compressionAllowed, compressionsList } from '../sink/formats.js';
import type { Compression, OutputFormat } from '../sink/sink.js';
import { Secret } from './secret.js';
import { ownPackage } from '../package-root.js';
import {
  camelCase,
  SETTING_LIST,
  SETTINGS,
  type Camel,
  type CliFlags,
  type SectionOf,
  type Setting,
  type SettingKey,
  type SettingKeyIn,
  type SettingValue,
} from '../settings/settings.js';
import { fileFields, settingsInFile, type JobFileSettings } from '../settings/file-sections.js';

export { ENV_VARS, LOG_FORMATS, LOG_LEVELS, type CliFlags, type LogFormat, type LogLevel } from '../settings/settings.js';

type Table = typeof SETTINGS;
/** The settings resolved into the configuration: those a config file or the environment may set. */
type Resolved = SettingKeyIn<'config'> | SettingKeyIn<'env'>;
/** Secrets are held in Secrets; a setting without a default is null when no layer sets it. */
type ResolvedValue<K extends SettingKey> = Table[K] extends { secret: true }
  ? Secret | null
  : Table[K] extends { default: unknown } | { defaultFrom: unknown }
    ? SettingValue<K>
    : SettingValue<K> | null;

/** Each resolved setting at its key in camelCase: `output.max_rows_per_file` is `output.maxRowsPerFile`, `staging_dir` is `stagingDir`. */
type ResolvedSettings = { [K in Resolved as K extends `${string}.${string}` ? never : Camel<K>]: ResolvedValue<K> } & {
  [S in SectionOf<Resolved>]: { [K in Resolved as K extends `${S}.${infer F}` ? Camel<F> : never]: ResolvedValue<K> };
};

/**
 * The settings of the table (`configFile` is the config file read, or null), the values derived
 * from them, and which layer set each value: "default", "config <file>", "env <VAR>", "job <file>",
 * "flag --<name>". Credentials of S3 are not here: the AWS SDK's default chain provides them.
 */
export type ResolvedConfig = ResolvedSettings & {
  /** True when source.baseUrl is "sandbox": start the built-in sandbox in-process. */
  source: { sandbox: boolean };
  /** A custom endpoint is a non-AWS S3 (radosgw, MinIO ...): path-style addressing. */
  s3: { forcePathStyle: boolean };
  origins: Readonly<Record<string, string>>;
};

/** A loaded job as a layer: the settings its file sets, the file (the layer's origin), and its targets' datasets. */
export type JobLayer = { jobFile: string; targets: readonly { datasets: readonly string[] }[] } & {
  [S in keyof JobFileSettings]: { [F in keyof JobFileSettings[S]]?: JobFileSettings[S][F] | null };
};

export interface ResolveConfigInput {
  /** Default: process.env. */
  env?: Record<string, string | undefined>;
  /** A config file path; null = none at all; undefined = INSIGHT_EXPORT_CONFIG, else the packaged config/default.yaml. */
  configFile?: string | null;
  job?: JobLayer | null;
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

/** The config file's schema: a section of each setting's file key, or a top-level field. */
function configFileSchema(fields: Map<string, Record<string, z.ZodType>>) {
  const { '': topLevel, ...sections } = Object.fromEntries(fields);
  const shape: Record<string, z.ZodType> = { $schema: z.string().optional(), ...topLevel };
  for (const [name, sectionFields] of Object.entries(sections)) shape[name] = z.strictObject(sectionFields).optional();
  return z.strictObject(shape).describe('insight-export configuration (defaults for every job).');
}

/** One layer: setting key -> value. */
type Layer = Map<string, unknown>;

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
  if (doc.value === undefined || doc.value === null) return new Map();
  const fields = fileFields('config', cwd);
  const schema = configFileSchema(fields);
  const r = schema.safeParse(
    dropEmptySections(
      doc.value,
      [...fields.keys()].filter((s) => s !== ''),
    ),
  );
  if (!r.success) throw new ConfigFileError(issuesToProblems(r.error.issues, { doc, schema }));
  return settingsInFile('config', r.data as Record<string, unknown>);
}

type Problem = { where: string; message: string; hint?: string | undefined };

/** The settings the job file sets (the file's `retries.timeout` at `retries.timeout_ms`). */
function jobLayer(job: JobLayer): Layer {
  const layer: Layer = new Map();
  for (const s of IN_JOB_FILE) {
    const [section, field] = s.key.split('.') as [keyof JobFileSettings, string];
    const v = (job[section] as Record<string, unknown>)[field];
    if (v !== undefined && v !== null) layer.set(s.key, v);
  }
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
const IN_JOB_FILE = LAYERED.filter((s) => s.places.includes('job'));
/** The settings of ResolvedConfig, in table order. */
const RESOLVED = SETTING_LIST.filter((s) => s.places.includes('config') || s.places.includes('env'));

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
    const raw = (flags as Record<string, unknown>)[camelCase(s.flag.name)];
    if (raw !== undefined && raw !== '') layers.fromString(s, raw, `flag --${s.flag.name}`, `--${s.flag.name}`);
  }
}

/** Secrets: environment only, held in Secrets (a later variable of the same setting wins). */
function applySecrets(layers: Layers, env: Record<string, string | undefined>): void {
  for (const s of SETTING_LIST.filter((x) => x.secret)) {
    const name = [...(s.env ?? [])].reverse().find((n) => env[n]?.trim());
    if (name === undefined) continue;
    layers.values.set(s.key, new Secret(env[name]!.trim()));
    layers.origins[s.key] = `env ${name}`;
  }
}

/** The defaults that follow another setting's value (compression follows the format), where no layer set one. */
function applyDependentDefaults(layers: Layers): void {
  for (const s of LAYERED) {
    if (!s.defaultFrom || layers.values.get(s.key) !== undefined) continue;
    const other = layers.get<never>(s.defaultFrom.key);
    layers.values.set(s.key, s.defaultFrom.value(other));
    layers.origins[s.key] = `default for ${String(other)}`;
  }
}

/** Rules across settings (and layers): validated once, after every layer. */
function checkAcrossSettings(layers: Layers, input: ResolveConfigInput): void {
  const { problems } = layers;
  const format = layers.get<OutputFormat>('output.format');
  const compression = layers.get<Compression>('output.compression');
  if (!compressionAllowed(format, compression)) {
    problems.push({
      where: `output.compression=${compression} (${layers.originOf('output.compression')})`,
      message: `is not available for NDJSON (output.format from ${layers.originOf('output.format')})`,
      hint: `NDJSON files are ${compressionsList('ndjson')}`,
    });
  }
  const partitioning = layers.get<string>('output.partitioning');
  const datasets = new Set(input.job?.targets.flatMap((t) => t.datasets));
  if (datasets.size > 1 && !partitioningUses(partitioning, 'dataset')) {
    problems.push({
      where: `output.partitioning=${JSON.stringify(partitioning)} (${layers.originOf('output.partitioning')})`,
      message: 'has no {dataset} but the job exports several datasets',
      hint: 'files of different datasets have different columns: keep them in different folders',
    });
  }
  if (format === 'iceberg' && partitioning.split('/')[0] !== '{dataset}') {
    problems.push({
      where: `output.partitioning=${JSON.stringify(partitioning)} (${originLine(layers, input, 'output.partitioning')})`,
      message: `must start with {dataset}/ for Iceberg tables (output.format from ${layers.originOf('output.format')})`,
      hint: 'each table is the folder of its dataset: keep the default "{dataset}/chain_id={chain_id}/date={date}"',
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

/** A setting's origin, with its line when a job file set it. */
function originLine(layers: Layers, input: ResolveConfigInput, key: string): string {
  const origin = layers.originOf(key);
  const at = input.job && origin.startsWith('job ') ? fieldPosition(input.job.jobFile, key) : undefined;
  return at ? `${origin}:${at.line}:${at.column}` : origin;
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

/** Where a setting sits in ResolvedConfig: ["output", "maxRowsPerFile"], ["stagingDir"]. */
function pathOf(s: Setting): string[] {
  return s.key.split('.').map(camelCase);
}

export function resolveConfig(input: ResolveConfigInput = {}): ResolvedConfig {
  const env = input.env ?? process.env;
  const layers = new Layers(input.cwd ?? process.cwd());
  applyDefaults(layers);
  const configFile = applyConfigFile(layers, input, env);
  layers.values.set(SETTINGS.config_file.key, configFile);
  applyEnvironment(layers, env);
  if (input.job) layers.apply(jobLayer(input.job), `job ${input.job.jobFile}`);
  applyFlags(layers, input.cliFlags);
  applySecrets(layers, env);
  applyDependentDefaults(layers);
  checkAcrossSettings(layers, input);
  throwProblems(layers.problems);

  const cfg: Record<string, Record<string, unknown>> = {};
  for (const s of RESOLVED) {
    const [field, section] = pathOf(s).reverse() as [string, string | undefined];
    const into = section === undefined ? cfg : (cfg[section] ??= {});
    into[field] = layers.values.get(s.key) ?? null;
  }
  const resolved = cfg as unknown as ResolvedSettings;
  const derived = {
    source: { ...resolved.source, sandbox: resolved.source.baseUrl === SANDBOX },
    s3: { ...resolved.s3, forcePathStyle: resolved.s3.endpoint !== null },
  };
  return deepFreeze({ ...resolved, ...derived, origins: layers.origins });
}

/** Values derived from settings that `describeConfig` shows, each after the setting named. */
const DERIVED_ROWS: Record<string, (cfg: ResolvedConfig) => [string, unknown, string]> = {
  's3.region': (cfg) => ['s3.force_path_style', cfg.s3.forcePathStyle, 'derived from s3.endpoint'],
};

/** Human-readable listing, one setting a line with where it came from; secrets are never shown. */
export function describeConfig(cfg: ResolvedConfig): string {
  const show = (v: unknown) => (v === null || v === undefined ? '(not set)' : typeof v === 'string' ? v : JSON.stringify(v));
  const shown = (s: Setting, v: unknown) => (v === null ? '(not set)' : s.secret ? '[redacted]' : s.show ? s.show(v as never) : show(v));
  const rows = RESOLVED.filter((s) => s !== SETTINGS.config_file).flatMap((s): [string, string, string][] => {
    const [section, field] = pathOf(s);
    const v =
      field === undefined
        ? (cfg as unknown as Record<string, unknown>)[section!]
        : (cfg as unknown as Record<string, Record<string, unknown>>)[section!]![field];
    const derived = DERIVED_ROWS[s.key]?.(cfg);
    return [
      [s.fileKey ?? s.key, shown(s, v), cfg.origins[s.key] ?? 'default'],
      ...(derived ? [[derived[0], show(derived[1]), derived[2]] as [string, string, string]] : []),
    ];
  });
  const width = Math.max(...rows.map((r) => r[0].length));
  return [`config file: ${cfg.configFile ?? '(none)'}`, ...rows.map(([k, v, from]) => `${k.padEnd(width)}  ${v}  [${from}]`)].join('\n');
}
