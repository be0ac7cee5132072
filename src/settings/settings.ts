/**
 * Every setting, declared once: its key, CLI flag, environment variables, parsers, default, doc
 * and where it may be set. The yargs options, the environment names, the config file's and the
 * job file's settings fields, the JSON Schema's descriptions, the resolver and the resolved
 * configuration's type all follow this table; a test checks config/default.yaml and the commands
 * against it.
 *
 * Configuration flows one way: defaults < config file < environment < job file < CLI flag.
 *
 * Its rows are declared by topic, each once, in source-settings.ts, s3-settings.ts,
 * request-settings.ts, output-settings.ts, iceberg-settings.ts, catalog-settings.ts and run-settings.ts; their order
 * here is the order of --help and of the settings' docs.
 */
import { CATALOG_SETTINGS } from './catalog-settings.js';
import { ICEBERG_SETTINGS } from './iceberg-settings.js';
import { OUTPUT_SETTINGS } from './output-settings.js';
import { REQUEST_SETTINGS } from './request-settings.js';
import { RUN_SETTINGS } from './run-settings.js';
import { S3_SETTINGS } from './s3-settings.js';
import type { Setting, SettingPlace } from './setting.js';
import { SOURCE_SETTINGS } from './source-settings.js';

export { CATALOG_AUTH_KINDS, type CatalogAuthKind } from './catalog-settings.js';
export { BATCH_WINDOWS, BLOCK_BATCH_SPAN, type BatchWindows } from './output-settings.js';
export { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './run-settings.js';
export { checked, type FlagGroup, type Setting, type SettingPlace } from './setting.js';
export { MIN_REQUESTS_PER_SECOND, REQUESTS_PER_SECOND_RANGE, requestsPerSecondInRange } from './parsers.js';

// ---------------------------------------------------------------- the table, assembled by topic

export const SETTINGS = {
  ...SOURCE_SETTINGS,
  ...S3_SETTINGS,
  ...REQUEST_SETTINGS,
  ...OUTPUT_SETTINGS,
  ...ICEBERG_SETTINGS,
  ...CATALOG_SETTINGS,
  ...RUN_SETTINGS,
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
