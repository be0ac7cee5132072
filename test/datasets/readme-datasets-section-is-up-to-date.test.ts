import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DATASET_SECTIONS, datasetColumns, jobExample, updateReadme } from '../../scripts/columns-doc.js';
import { parseJob } from '../../src/job/index.js';

const readme = () => readFile(new URL('../../README.md', import.meta.url), 'utf8');

describe("README's Datasets section", () => {
  it('has the column tables the dataset modules declare (npx tsx scripts/columns-doc.ts rewrites them)', async () => {
    const text = await readme();
    expect(updateReadme(text)).toBe(text);
    const columns = datasetColumns(text);
    for (const dataset of DATASET_SECTIONS) {
      expect(columns[dataset].length).toBeGreaterThan(5);
      for (const c of columns[dataset]) expect(text).toContain(`| \`${c.name}\` |`);
    }
  });

  it('notices a stale table', async () => {
    const text = await readme();
    const stale = text.replace(/\| `snapshot_date` \|[^\n]*\n/, '');
    expect(stale).not.toBe(text);
    expect(updateReadme(stale)).toBe(text);
  });

  it('shows one valid job example per dataset, exporting that dataset', async () => {
    const text = await readme();
    for (const dataset of DATASET_SECTIONS) {
      const job = parseJob(jobExample(text, dataset), `README.md (${dataset} example)`);
      expect(job.targets.flatMap((t) => t.datasets)).toEqual([dataset]);
    }
  });
});
