/**
 * The sections of a job file that hold settings (source's URLs, output, concurrency, retries):
 * every field is a setting of the table (src/settings/settings.ts); a job file gives the sections
 * their descriptions.
 */
import { z } from 'zod';
import { fileFields } from '../settings/file-sections.js';

const SECTION_DOCS = {
  output: 'Output files: format, compression, destination and layout.',
  concurrency: 'How hard to push the service.',
  retries: 'Retries with exponential backoff and jitter (Retry-After honoured).',
} as const;

/** The settings sections a job file may leave empty (`output:` with nothing under it). */
export const SETTINGS_SECTIONS = Object.keys(SECTION_DOCS) as (keyof typeof SECTION_DOCS)[];

/** The settings fields of `source:`, and the other settings sections (`jobDir`: the job file's folder). */
export function settingsSections(cwd: string, jobDir: string) {
  const fields = fileFields('job', cwd, jobDir);
  const section = (name: keyof typeof SECTION_DOCS) => z.strictObject(fields.get(name) ?? {}).describe(SECTION_DOCS[name]);
  return {
    source: fields.get('source') ?? {},
    output: section('output'),
    concurrency: section('concurrency'),
    retries: section('retries'),
  };
}
