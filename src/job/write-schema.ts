/**
 * Writes schema/job.schema.json from the zod definition (`npm run schema`).
 * With --check it only compares and exits 1 when the committed file is out of date.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jobJsonSchema } from './schema.js';

export const JOB_SCHEMA_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema/job.schema.json');

export function renderJobSchema(): string {
  return `${JSON.stringify(jobJsonSchema(), null, 2)}\n`;
}

async function main(): Promise<void> {
  const text = renderJobSchema();
  if (process.argv.includes('--check')) {
    const current = await readFile(JOB_SCHEMA_FILE, 'utf8').catch(() => '');
    if (current !== text) {
      process.stderr.write(`${JOB_SCHEMA_FILE} is out of date: run npm run schema\n`);
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(JOB_SCHEMA_FILE, text);
  process.stdout.write(`wrote ${path.relative(process.cwd(), JOB_SCHEMA_FILE)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
