import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../src/job/load.js';
import { jobDatasets } from '../../src/job/schema.js';

const files = readdirSync('jobs').filter((f) => /\.(ya?ml|json)$/.test(f));

describe('the example job files in jobs/ load', () => {
  it('has the examples the README and the team rely on', () => {
    for (const name of [
      'demo',
      'wallet-transactions',
      'contract-events',
      'aggregates',
      'nft-holdings',
      'incremental-latest',
      's3-export',
    ]) {
      expect(files).toContain(`${name}.yaml`);
    }
  });

  it.each(files)('%s', async (f) => {
    const job = await loadJob(`jobs/${f}`);
    expect(job.jobFile).toBe(`jobs/${f}`);
    expect(job.targets.length).toBeGreaterThan(0);
    expect(job.warnings).toEqual([]);
  });

  it('the demo runs on the sandbox into ./out', async () => {
    const job = await loadJob('jobs/demo.yaml');
    expect(job.source.base_url).toBe('sandbox');
    expect(job.source.chains).toHaveLength(3);
    expect(jobDatasets(job)).toEqual(['transactions', 'events']);
    expect(job.output.destination?.kind).toBe('local');
  });

  it('every dataset appears in some example', async () => {
    const all = new Set<string>();
    for (const f of files) for (const d of jobDatasets(await loadJob(`jobs/${f}`))) all.add(d);
    expect([...all].sort()).toEqual(['aggregates', 'events', 'nft_holdings', 'transactions']);
  });
});
