import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DATASET_SECTIONS, DATASETS_DOC, datasetColumns, jobExample, updateColumnTables } from '../../scripts/columns-doc.js';
import { parseJob } from '../../src/job/index.js';

const doc = () => readFile(new URL(`../../${DATASETS_DOC}`, import.meta.url), 'utf8');

describe(`${DATASETS_DOC}, one section per dataset`, () => {
  it('has the column tables the dataset modules declare (npx tsx scripts/columns-doc.ts rewrites them)', async () => {
    const text = await doc();
    expect(updateColumnTables(text)).toBe(text);
    const columns = datasetColumns(text);
    for (const dataset of DATASET_SECTIONS) {
      expect(columns[dataset].length).toBeGreaterThan(5);
      for (const c of columns[dataset]) expect(text).toContain(`| \`${c.name}\` |`);
    }
  });

  it('notices a stale table', async () => {
    const text = await doc();
    const stale = text.replace(/\| `snapshot_date` \|[^\n]*\n/, '');
    expect(stale).not.toBe(text);
    expect(updateColumnTables(stale)).toBe(text);
  });

  it('shows one valid job example per dataset, exporting that dataset', async () => {
    const text = await doc();
    for (const dataset of DATASET_SECTIONS) {
      const job = parseJob(jobExample(text, dataset), `${DATASETS_DOC} (${dataset} example)`);
      expect(job.targets.flatMap((t) => t.datasets)).toEqual([dataset]);
    }
  });
});
