/**
 * Issue 44 item 3: every job snippet of docs/catalogs.md and of the README's Iceberg section (a
 * ```yaml block with a `catalog:`) validates with `insight-export validate`, in-process, so the
 * settings they show are the settings the product takes. The secrets the snippets' auth needs are
 * set in the environment, as a user would.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('ops-catalog-snippets-');

function catalogJobs(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((y) => /\n {2}catalog:/.test(y));
}

const DOCS = catalogJobs('docs/catalogs.md');
const README = catalogJobs('README.md');

describe('the catalog jobs of the docs validate', () => {
  it('docs/catalogs.md shows Glue, S3 Tables, Polaris, R2, Unity, Lakekeeper, Nessie and BigLake; the README a Glue job naming what S3 Tables, Polaris and R2 change', () => {
    const uris = (jobs: string[]) => jobs.map((j) => /uri: (\S+)/.exec(j)![1]!);
    const docs = uris(DOCS).join(' ');
    for (const host of [
      'glue.',
      's3tables.',
      'snowflakecomputing.com',
      'cloudflarestorage.com',
      'unity-catalog',
      'lakekeeper',
      'nessie',
      'biglake',
    ])
      expect(docs).toContain(host);
    // The README shows one whole job (Glue) and, in its comments, what S3 Tables, Polaris and R2 change.
    expect(uris(README).join(' ')).toContain('glue.');
    for (const what of ['s3tables.', 'PRINCIPAL_ROLE:ALL', 'R2: bearer']) expect(README.join('')).toContain(what);
  });

  it.each([...DOCS.map((j, i) => [`docs/catalogs.md #${i + 1}`, j]), ...README.map((j, i) => [`README.md #${i + 1}`, j])])(
    '%s',
    async (where, yaml) => {
      const file = join(tmp.dir, `${where.replace(/\W+/g, '_')}.yaml`);
      await writeFile(file, yaml);
      const env = { ...process.env };
      Object.assign(process.env, {
        INSIGHT_EXPORT_CATALOG_TOKEN: 't',
        INSIGHT_EXPORT_CATALOG_CLIENT_ID: 'id',
        INSIGHT_EXPORT_CATALOG_CLIENT_SECRET: 's',
      });
      try {
        const r = await runCli(['validate', file]);
        expect(r.stderr + r.stdout).not.toMatch(/error|refused/i);
        expect(r.code).toBe(0);
      } finally {
        process.env = env;
      }
    },
  );
});
