import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/load.js';
import { estimateRequests, pagesFor } from '../../src/plan/estimate.js';
import { planJob } from '../../src/plan/plan.js';

describe('estimateRequests', () => {
  it('counts floor(rows / limit) + 1 pages, and the extra short page of each split when over the page cap', () => {
    expect(pagesFor(0, 1000, 20)).toBe(1);
    expect(pagesFor(999, 1000, 20)).toBe(1);
    expect(pagesFor(1000, 1000, 20)).toBe(2); // a full page, then an empty one ends paging
    expect(pagesFor(19_500, 1000, 20)).toBe(20);
    // 45 000 rows = 46 pages > 20: three sub-windows, each ending with a short page.
    expect(pagesFor(45_000, 1000, 20)).toBe(45 + 3);
  });

  it('is one request per unit without densities, and scales with the density given', async () => {
    const job = parseJob(
      `name: e
source: { base_url: sandbox, chains: [1] }
targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: 0, to: 30000, chunk: 10000 }
`,
      'jobs/e.yaml',
    );
    const plan = await planJob(job, { completed: () => [] });
    const bare = estimateRequests(plan);
    expect(bare).toMatchObject({ units: 3, minimum: 3, expected: 3, rows: null });
    // 0.25 rows per block: 2500 rows per 10 000-block window = 3 pages of 1000.
    const dense = estimateRequests(plan, { density: () => 0.25 });
    expect(dense.expected).toBe(9);
    expect(dense.rows).toBe(7500);
    expect(dense.byDataset.transactions).toEqual({ units: 3, requests: 9 });
  });
});
