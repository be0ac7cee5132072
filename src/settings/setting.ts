/**
 * What a setting is (the shape of a row of the settings table, src/settings/settings.ts): where it
 * may be given, which commands take its flag, and how a file's value of it is checked.
 */
import { z } from 'zod';
import type { Parsed } from './values.js';

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

/** Every place: config file, environment, job file and flag. */
export const ALL: readonly SettingPlace[] = ['config', 'env', 'job', 'flag'];
/** The flag groups of the commands that read the service: every job command and the read commands. */
export const SOURCE_AND_JOB: readonly FlagGroup[] = ['job', 'source'];
