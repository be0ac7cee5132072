/**
 * The settings as config and job files hold them, from the table: the fields of each section
 * (optional, described by the setting's doc, in table order), the settings a parsed file sets,
 * and the type of what a job file sets.
 */
import { z } from 'zod';
import {
  SETTING_LIST,
  type SectionOf,
  type Setting,
  type SettingKey,
  type SettingKeyIn,
  type SettingValue,
  type SETTINGS,
} from './settings.js';

/** The places that are files. */
export type FilePlace = 'config' | 'job';

type Table = typeof SETTINGS;
/** The settings a file at `place` holds as fields (range.from and range.to have the job's own range schema). */
type InFile<P extends FilePlace> = { [K in SettingKeyIn<P>]: Table[K] extends { file: unknown } ? K : never }[SettingKeyIn<P>];
type FieldOf<K extends string, S extends string> = K extends `${S}.${infer F}` ? F : never;

/** What a job file sets, section by section, at the settings' own field names (`retries.timeout_ms`); a field the file leaves out is absent. */
export type JobFileSettings = {
  [S in SectionOf<InFile<'job'>>]: { [K in InFile<'job'> as FieldOf<K, S>]?: SettingValue<K> };
};

/** A section with null for each field not set. */
export type OrNull<T> = { [F in keyof T]-?: Exclude<T[F], undefined> | null };

type FileSetting = Setting & { file: NonNullable<Setting['file']> };

function inFile(place: FilePlace): FileSetting[] {
  return SETTING_LIST.filter((s): s is FileSetting => s.places.includes(place) && s.file !== undefined);
}

/** ["output", "max_rows_per_file"]; ["", "log_level"] for a top-level key. */
function split(key: string): [section: string, field: string] {
  const dot = key.indexOf('.');
  return dot < 0 ? ['', key] : [key.slice(0, dot), key.slice(dot + 1)];
}

/** The fields a file at `place` may hold, by section ("" for top-level fields), sections and fields in table order (`jobDir`: the job file's folder). */
export function fileFields(place: FilePlace, cwd: string, jobDir?: string): Map<string, Record<string, z.ZodType>> {
  const sections = new Map<string, Record<string, z.ZodType>>();
  const groups = new Map<string, Record<string, z.ZodType>>();
  for (const s of inFile(place)) {
    const [section, field] = split(s.fileKey ?? s.key);
    const fields = sections.get(section) ?? {};
    const schema = s.file(cwd, jobDir).optional().describe(s.doc);
    const [group, inner] = split(field);
    if (group === '') fields[field] = schema;
    else {
      // A field of a group inside the section (`output.catalog.uri`): the group is one object.
      const groupKey = `${section}.${group}`;
      if (!groups.has(groupKey)) groups.set(groupKey, {});
      groups.get(groupKey)![inner] = schema;
      fields[group] = z.strictObject(groups.get(groupKey)!).optional().describe(`${section}.${group} settings.`);
    }
    sections.set(section, fields);
  }
  // Each group's object was made before all its fields were in: made again from them all.
  for (const [groupKey, groupFields] of groups) {
    const [section, group] = split(groupKey);
    sections.get(section)![group] = z.strictObject(groupFields).optional().describe(`${groupKey} settings.`);
  }
  return sections;
}

/** The value at a file key's path (`output.catalog.uri`: value.output.catalog.uri). */
function at(value: Record<string, unknown>, fileKey: string): unknown {
  let v: unknown = value;
  for (const name of fileKey.split('.')) v = (v as Record<string, unknown> | undefined)?.[name];
  return v;
}

/** The settings a parsed file sets, at their keys (the file's `retries.timeout` is `retries.timeout_ms`). */
export function settingsInFile(place: FilePlace, value: Record<string, unknown>): Map<SettingKey, unknown> {
  const set = new Map<SettingKey, unknown>();
  for (const s of inFile(place)) {
    const v = at(value, s.fileKey ?? s.key);
    if (v !== undefined) set.set(s.key as SettingKey, v);
  }
  return set;
}

/** A parsed job file's settings, every section present. */
export function jobFileSettings(value: Record<string, unknown>): JobFileSettings {
  const sections: Record<string, Record<string, unknown>> = {};
  for (const s of inFile('job')) sections[split(s.key)[0]] ??= {};
  for (const [key, v] of settingsInFile('job', value)) {
    const [section, field] = split(key);
    sections[section]![field] = v;
  }
  return sections as JobFileSettings;
}

/** A section of a job file's settings with null for each field the file leaves out. */
export function orNull<S extends keyof JobFileSettings>(section: S, values: JobFileSettings[S]): OrNull<JobFileSettings[S]> {
  const fields = inFile('job').flatMap((s) => (split(s.key)[0] === section ? [split(s.key)[1]] : []));
  return Object.fromEntries(fields.map((f) => [f, (values as Record<string, unknown>)[f] ?? null])) as OrNull<JobFileSettings[S]>;
}
