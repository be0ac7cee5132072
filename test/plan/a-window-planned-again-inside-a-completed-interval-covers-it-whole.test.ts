/**
 * A window exported again replaces every completed interval of its unit it overlaps, files and
 * all. So the planner never plans a part of a completed interval (a batch of windows, compacted
 * windows): a re-export that reaches into one (--force over a range that cuts it, a rewind, a
 * repair) covers it whole, as one window; the rest of the range is cut on the grid as before.
 */
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/load.js';
import type { Interval } from '../../src/plan/intervals.js';
import { planJob, type Plan } from '../../src/plan/plan.js';

const W1 = '0x1111111111111111111111111111111111111111';
const UNIT = `transactions/${W1}/1/block`;

const job = (range: string) =>
  parseJob(
    `name: p
source: { base_url: sandbox, chains: [1] }
targets:
  - wallet: "${W1}"
range: ${range}
`,
    'jobs/p.yaml',
  );

const windows = (plan: Plan) => plan.units.filter((u) => u.unitKey === UNIT).map((u) => [u.window.start, u.window.end]);

describe('a re-export reaching into a completed interval', () => {
  // State holds [0, 100) as one interval (a batch of ten windows of 10) and [100, 110).
  const exported = new Map<string, Interval[]>([
    [
      UNIT,
      [
        { start: 0, end: 100 },
        { start: 100, end: 110 },
      ],
    ],
  ]);

  it('--force over a range that cuts it plans the whole interval as one window', async () => {
    const plan = await planJob(job('{ from: 55, to: 130, chunk: 10 }'), {
      completed: () => [],
      exported: (k) => exported.get(k) ?? [],
    });
    expect(windows(plan)).toEqual([
      [0, 100],
      [100, 110],
      [110, 120],
      [120, 130],
    ]);
    expect(plan.coverage[0]!.todo).toEqual([{ start: 0, end: 130 }]);
  });

  it('a rewound interval is planned whole even when the range starts inside it', async () => {
    const plan = await planJob(job('{ from: 55, to: 110, chunk: 10 }'), {
      completed: () => [{ start: 100, end: 110 }],
      exported: (k) => exported.get(k) ?? [],
    });
    expect(windows(plan)).toEqual([[0, 100]]);
  });

  it('completed intervals the plan does not reach stay as they are, and without them the grid is unchanged', async () => {
    const plan = await planJob(job('{ from: 0, to: 140, chunk: 10 }'), {
      completed: (k) => exported.get(k) ?? [],
      exported: (k) => exported.get(k) ?? [],
    });
    expect(windows(plan)).toEqual([
      [110, 120],
      [120, 130],
      [130, 140],
    ]);
  });
});
