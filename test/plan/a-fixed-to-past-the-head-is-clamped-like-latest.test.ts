import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/load.js';
import type { Interval } from '../../src/plan/intervals.js';
import { planJob, type Plan } from '../../src/plan/plan.js';

const W1 = '0x1111111111111111111111111111111111111111';

function job(range: string) {
  return parseJob(
    `name: p
source: { base_url: sandbox, chains: [1, 8453] }
targets:
  - wallet: "${W1}"
range: ${range}
`,
    'jobs/p.yaml',
  );
}

const none = () => [] as Interval[];
const windows = (plan: Plan) => plan.units.map((u) => `${u.unitKey} ${u.windowKey}`);

describe('a fixed `to` past the chain head', () => {
  it('by block: ends where to: latest would, says so, and the next run exports the rest', async () => {
    const heads: Record<number, number> = { 1: 1_000, 8453: 5_000 };
    const latest = async (c: number) => ({ block: heads[c]! });
    const fixed = await planJob(job('{ from: 900, to: 4000, chunk: 50 }'), { completed: none, latest });
    const asLatest = await planJob(job('{ from: 900, to: latest, chunk: 50 }'), { completed: none, latest });
    // Chain 1: head 1,000 - lag 64 + 1 = 937; chain 8453's head minus the lag is past to: not clamped.
    expect(fixed.clamped).toEqual([{ chainId: 1, to: 4000, end: 937 }]);
    expect(windows(fixed).filter((w) => w.includes('/1/'))).toEqual(windows(asLatest).filter((w) => w.includes('/1/')));
    expect(fixed.units.filter((u) => u.chainId === 8453).at(-1)!.window.end).toBe(4000);

    // Later: the head has moved on; the completed windows stay, the rest up to `to` is planned.
    const done = new Map(fixed.coverage.map((c) => [c.unitKey, c.todo]));
    heads[1] = 10_000;
    const later = await planJob(job('{ from: 900, to: 4000, chunk: 50 }'), { completed: (k) => done.get(k) ?? [], latest });
    expect(later.clamped).toEqual([]);
    expect(later.units.map((u) => [u.chainId, u.window.start, u.window.end])).toEqual([
      [1, 937, 950],
      ...Array.from({ length: (4000 - 950) / 50 }, (_, i) => [1, 950 + 50 * i, 1000 + 50 * i]),
    ]);
  });

  it('by time: a `to` in the future is clamped to the head time minus the lag, like latest', async () => {
    const head = Date.UTC(2026, 0, 10, 12) / 1000;
    const latest = async () => ({ time: head });
    const now = () => Date.UTC(2026, 0, 10, 13) / 1000;
    const fixed = await planJob(job('{ from: "2026-01-08", to: "2030-01-01" }'), { completed: none, latest, now });
    const asLatest = await planJob(job('{ from: "2026-01-08", to: latest }'), { completed: none, latest, now });
    const end = head - 900 + 1;
    expect(fixed.clamped).toEqual([
      { chainId: 1, to: Date.UTC(2030, 0, 1) / 1000, end },
      { chainId: 8453, to: Date.UTC(2030, 0, 1) / 1000, end },
    ]);
    expect(windows(fixed)).toEqual(windows(asLatest));
    expect(Math.max(...fixed.units.map((u) => u.window.end))).toBe(end);
  });

  it('by time: a range that ended long before now is proven served by the service, not by the clock', async () => {
    const asked: [number, string, number][] = [];
    const serves = async (chainId: number, axis: string, point: number) => (asked.push([chainId, axis, point]), true);
    const latest = async (): Promise<never> => {
      throw new Error('the head was asked for');
    };
    const plan = await planJob(job('{ from: "2024-02-01", to: "2024-02-03" }'), { completed: none, latest, serves });
    expect(plan.clamped).toEqual([]);
    expect(plan.units).toHaveLength(2 * 2);
    // The newest second the range needs, plus the safety lag, once per chain.
    const needed = Date.UTC(2024, 1, 3) / 1000 - 1 + 900;
    expect(asked).toEqual([
      [1, 'time', needed],
      [8453, 'time', needed],
    ]);
  });

  it('by time: a past range the service has not indexed yet is clamped to its head, whatever the clock says', async () => {
    const head = Date.UTC(2024, 1, 1, 12) / 1000;
    const latest = async () => ({ time: head });
    const serves = async () => false;
    const plan = await planJob(job('{ from: "2024-01-31", to: "2024-02-03" }'), { completed: none, latest, serves });
    const end = head - 900 + 1;
    expect(plan.clamped.map((c) => c.end)).toEqual([end, end]);
    expect(Math.max(...plan.units.map((u) => u.window.end))).toBe(end);
    // Without `serves` the head decides every fixed range.
    const noServes = await planJob(job('{ from: "2024-01-31", to: "2024-02-03" }'), { completed: none, latest });
    expect(noServes.clamped).toEqual(plan.clamped);
  });

  it('a chain whose fixed range is complete asks nothing; a gap below the end asks only for the gap', async () => {
    const asked: number[] = [];
    const serves = async (_c: number, _a: string, point: number) => (asked.push(point), true);
    const j = job('{ from: 900, to: 4000, chunk: 50 }');
    const complete = await planJob(j, { completed: () => [{ start: 900, end: 4000 }], serves });
    expect(complete.units).toEqual([]);
    expect(asked).toEqual([]);
    const gap = await planJob(j, {
      completed: () => [
        { start: 900, end: 1000 },
        { start: 1050, end: 4000 },
      ],
      serves,
    });
    expect(gap.units.map((u) => u.windowKey)).toEqual(['000000001000_000000001050', '000000001000_000000001050']);
    expect(asked).toEqual([1050 - 1 + 64, 1050 - 1 + 64]);
  });

  it('verify plans the whole fixed range (clampFixedTo: false)', async () => {
    const plan = await planJob(job('{ from: 900, to: 4000, chunk: 50 }'), {
      completed: none,
      latest: async () => ({ block: 1_000 }),
      clampFixedTo: false,
    });
    expect(plan.clamped).toEqual([]);
    expect(plan.units.at(-1)!.window.end).toBe(4000);
  });
});
