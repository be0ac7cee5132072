/**
 * Where a worker's shard comes from (--shard, INSIGHT_EXPORT_SHARD, Kubernetes indexed jobs, AWS
 * Batch array jobs), the typed errors for what cannot be a shard, and the partition property the
 * sharded runs rely on: for any unit keys, windows and N, the shards are disjoint, cover every
 * window, each holds contiguous windows of a unit, and a recorded split never changes an owner.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  emptySplit,
  ownerOf,
  uncoveredSpans,
  withSpans,
  type Plan,
  type StreamCoverage,
  type PlannedWindow,
} from '../../src/plan/index.js';
import { ownershipOf, parseShard, planForShard, resolveShard, ShardError } from '../../src/run/shard.js';

describe('resolveShard', () => {
  it('takes --shard first, then INSIGHT_EXPORT_SHARD, then the Kubernetes and AWS Batch variables', () => {
    const env = {
      INSIGHT_EXPORT_SHARD: '1/3',
      JOB_COMPLETION_INDEX: '2',
      JOB_COMPLETION_COUNT: '5',
      AWS_BATCH_JOB_ARRAY_INDEX: '3',
      AWS_BATCH_JOB_ARRAY_SIZE: '7',
    };
    expect(resolveShard('0/2', env)).toEqual({ index: 0, count: 2 });
    expect(resolveShard(undefined, env)).toEqual({ index: 1, count: 3 });
    expect(resolveShard(undefined, { ...env, INSIGHT_EXPORT_SHARD: undefined })).toEqual({ index: 2, count: 5 });
    expect(resolveShard(undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '3', AWS_BATCH_JOB_ARRAY_SIZE: '7' })).toEqual({ index: 3, count: 7 });
    expect(resolveShard(undefined, {})).toBeNull();
    expect(resolveShard(' 4 / 9 ', {})).toEqual({ index: 4, count: 9 });
  });

  it.each([
    ['3/3', /outside 0\.\.2/],
    ['1/0', /count must be a whole number >= 1/],
    ['-1/4', /Invalid shard/],
    ['1of4', /Invalid shard/],
    ['', null],
  ])('--shard %j', (text, message) => {
    if (message === null) {
      expect(resolveShard(text, {})).toBeNull();
      return;
    }
    expect(() => parseShard(text, '--shard')).toThrow(ShardError);
    expect(() => parseShard(text, '--shard')).toThrow(message);
  });

  it('an engine index without its count is an error naming the variable to set (exit code 2)', () => {
    for (const [index, count] of [
      ['JOB_COMPLETION_INDEX', 'JOB_COMPLETION_COUNT'],
      ['AWS_BATCH_JOB_ARRAY_INDEX', 'AWS_BATCH_JOB_ARRAY_SIZE'],
    ] as const) {
      let err: unknown;
      try {
        resolveShard(undefined, { [index]: '0' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ShardError);
      expect((err as ShardError).exitCode).toBe(2);
      expect((err as ShardError).message).toContain(count);
    }
    expect(() => resolveShard(undefined, { JOB_COMPLETION_INDEX: 'x', JOB_COMPLETION_COUNT: '2' })).toThrow(/not a whole number/);
    expect(() => resolveShard(undefined, { JOB_COMPLETION_INDEX: '4', JOB_COMPLETION_COUNT: '4' })).toThrow(/outside 0\.\.3/);
  });
});

/** A plan of `windows` consecutive windows of length 10 per unit, from `from`. */
function planOf(unitKeys: string[], windows: number, from = 0): Plan {
  const units = unitKeys.flatMap((unitKey) =>
    Array.from({ length: windows }, (_, w) => ({ unitKey, window: { start: from + w * 10, end: from + w * 10 + 10 } }) as PlannedWindow),
  );
  const coverage = unitKeys.map((unitKey) => ({ unitKey }) as StreamCoverage);
  return { jobName: 'j', axis: 'time', heads: {}, clamped: [], units, coverage };
}

const splitOf = (plan: Plan, n: number, split = emptySplit(n)) => withSpans(split, uncoveredSpans(split, plan));

describe('shards of a plan', () => {
  it('are disjoint, cover the plan, give each shard contiguous windows of a unit, and agree with the ownership a run uses', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 12 }),
        (keys, windows, n) => {
          const plan = planOf(keys, windows);
          const split = splitOf(plan, n);
          const owners = new Map<string, number[]>();
          for (let i = 0; i < n; i++) {
            for (const u of planForShard(plan, { index: i, count: n }, split).units) {
              const k = `${u.unitKey}@${u.window.start}`;
              owners.set(k, [...(owners.get(k) ?? []), i]);
              expect(ownershipOf({ index: i, count: n }, split).owns(u.unitKey, u.window)).toBe(true);
            }
          }
          for (const u of plan.units) expect(owners.get(`${u.unitKey}@${u.window.start}`)).toHaveLength(1);
          // Contiguous: along a unit's windows, each shard's windows form one run.
          for (const k of keys) {
            const seq = plan.units.filter((u) => u.unitKey === k).map((u) => owners.get(`${k}@${u.window.start}`)![0]!);
            const runs = seq.filter((s, i) => i === 0 || seq[i - 1] !== s);
            expect(new Set(runs).size).toBe(runs.length);
            // Balanced by length: no shard holds more than one window over its share.
            for (let i = 0; i < n; i++) expect(seq.filter((s) => s === i).length).toBeLessThanOrEqual(Math.ceil(windows / n) + 1);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a recorded split keeps every window's owner whatever a later plan holds; new windows get new spans", () => {
    const keys = ['transactions/0xa/1/time', 'transactions/0xa/10/time', 'transactions/0xa/8453/time'];
    const first = splitOf(planOf(keys, 40), 4);
    // The chains of one query are cut at the same points: a window of every chain has one owner (they share requests).
    for (const u of planOf(keys, 40).units)
      expect(keys.map((k) => ownerOf(first, k, u.window.start))).toEqual(keys.map(() => ownerOf(first, keys[0]!, u.window.start)));
    // A later plan: some windows done, the range moved forward by 8 windows.
    const later = planOf(keys, 28, 200);
    const next = splitOf(later, 4, first);
    for (const u of planOf(keys, 40).units)
      expect(ownerOf(next, u.unitKey, u.window.start)).toBe(ownerOf(first, u.unitKey, u.window.start));
    const added = later.units.filter((u) => ownerOf(first, u.unitKey, u.window.start) === null);
    expect(added).toHaveLength(3 * 8);
    expect(new Set(added.map((u) => ownerOf(next, u.unitKey, u.window.start))).size).toBe(4);
    // Every unit's lead is one shard, from its key and the count alone.
    for (const k of keys) expect([0, 1, 2, 3].filter((i) => ownershipOf({ index: i, count: 4 }, next).leads(k))).toHaveLength(1);
  });
});
