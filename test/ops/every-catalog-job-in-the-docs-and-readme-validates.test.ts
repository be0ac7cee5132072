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

/**
 * The README's job, then the same job with each `catalog:` of the table below it (a row
 * `| <catalog> | \`{ ... }\` |`) in place of its catalog block.
 */
function readmeJobs(): string[] {
  const jobs = catalogJobs('README.md');
  const rows = [...readFileSync('README.md', 'utf8').matchAll(/^\| [^|]+ \| `(\{ uri: [^`]+\})` \|$/gm)].map((m) => m[1]!);
  const swap = (job: string, catalog: string) => job.replace(/\n {2}catalog:\n(?: {4}.*\n)+/, `\n  catalog: ${catalog}\n`);
  return [...jobs, ...rows.map((row) => swap(jobs[0]!, row))];
}

const DOCS = catalogJobs('docs/catalogs.md');
const README = readmeJobs();

describe('the catalog jobs of the docs validate', () => {
  it('docs/catalogs.md shows Glue, S3 Tables, Polaris, R2, Unity, Lakekeeper, Nessie and BigLake; the README a Glue job and the catalog of S3 Tables, Polaris and R2', () => {
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
    // The README shows one whole job (Glue) and the catalog block of S3 Tables, Polaris and R2.
    expect(uris(README)).toEqual([
      expect.stringContaining('glue.'),
      expect.stringContaining('s3tables.'),
      expect.stringContaining('snowflakecomputing.com'),
      expect.stringContaining('cloudflarestorage.com'),
    ]);
    for (const job of README.slice(1)) expect(job).not.toContain('glue.');
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
