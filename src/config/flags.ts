/**
 * The yargs options of the settings table: each command group gets the flags its settings declare,
 * and `cliFlags` turns parsed arguments back into the resolver's CliFlags.
 */
import type { Argv, Options } from 'yargs';
import { camelCase, flagDescription, SETTING_LIST, type CliFlags, type FlagGroup, type Setting } from '../settings/settings.js';

/** The settings whose flag the group's commands take. */
export function flagSettings(group: FlagGroup): Setting[] {
  return SETTING_LIST.filter((s) => s.flag?.for.includes(group));
}

/** The yargs option of a setting. No default for layered settings: an absent flag must not hide the layers below it. */
export function yargsOption(s: Setting): Options {
  const f = s.flag!;
  return {
    // A number flag is read as written ("abc" stays "abc", not NaN): its setting's parser checks
    // it and names the value; yargs still turns "64" into 64.
    ...(f.type === 'number' ? { requiresArg: true } : { type: f.type }),
    describe: flagDescription(s),
    ...(f.alias ? { alias: f.alias } : {}),
    ...(f.choices ? { choices: [...f.choices] } : {}),
    ...(f.type === 'boolean' && s.default ? { default: s.default() } : {}),
  };
}

/** Adds the flags of a command group. */
export function withSettingFlags<T>(y: Argv<T>, group: FlagGroup): Argv<T> {
  let out = y;
  for (const s of flagSettings(group)) out = out.option(s.flag!.name, yargsOption(s)) as Argv<T>;
  return out;
}

/** The layered settings' flags given on the command line, by their CliFlags name. */
export function cliFlags(args: Record<string, unknown>): CliFlags {
  const flags: Record<string, unknown> = {};
  for (const s of SETTING_LIST) {
    if (!s.flag || !s.places.includes('config')) continue;
    const v = args[s.flag.name];
    if (v !== undefined) flags[camelCase(s.flag.name)] = v;
  }
  return flags as CliFlags;
}
