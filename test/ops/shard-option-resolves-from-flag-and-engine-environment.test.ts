/**
 * Where a worker's shard comes from (--shard, INSIGHT_EXPORT_SHARD, Kubernetes indexed jobs, AWS
 * Batch array jobs), the typed errors for what cannot be a shard, and the partition property the
 * sharded runs rely on: for any unit keys and N, the shards are disjoint, cover every unit, and a
 * unit's shard depends only on its key and N.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Plan, UnitCoverage, WorkUnit } from '../../src/plan/index.js';
import { parseShard, planForShard, resolveShard, shardOwnsUnit, ShardError } from '../../src/run/shard.js';

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

function planOf(unitKeys: string[]): Plan {
  const units = unitKeys.flatMap((unitKey) => [0, 1].map((w) => ({ unitKey, windowKey: String(w) }) as unknown as WorkUnit));
  const coverage = unitKeys.map((unitKey) => ({ unitKey }) as UnitCoverage);
  return { jobName: 'j', axis: 'time', heads: {}, clamped: [], units, coverage };
}

describe('shards of a plan', () => {
  it("are disjoint, cover the plan, keep a unit's windows together, and agree with shardOwnsUnit", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        (keys, n) => {
          const plan = planOf(keys);
          const owners = new Map<string, number[]>();
          for (let i = 0; i < n; i++) {
            const part = planForShard(plan, { index: i, count: n });
            for (const u of part.units) {
              if (!owners.has(u.unitKey)) owners.set(u.unitKey, []);
              owners.get(u.unitKey)!.push(i);
              expect(shardOwnsUnit({ index: i, count: n }, u.unitKey)).toBe(true);
            }
          }
          for (const k of keys) {
            const o = owners.get(k) ?? [];
            expect(o.length).toBe(2); // both windows of the unit ...
            expect(new Set(o).size).toBe(1); // ... in exactly one shard
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a unit's shard depends only on its key and the count, not on the rest of the plan", () => {
    const keys = Array.from({ length: 40 }, (_, i) => `transactions/0x${i.toString(16).padStart(40, '0')}/1/time`);
    const alone = keys.map((k) => [0, 1, 2, 3].find((i) => shardOwnsUnit({ index: i, count: 4 }, k)));
    const inPlan = keys.map((k) =>
      [0, 1, 2, 3].find((i) => planForShard(planOf(keys), { index: i, count: 4 }).coverage.some((c) => c.unitKey === k)),
    );
    expect(inPlan).toEqual(alone);
    expect(new Set(alone).size).toBe(4); // 40 units spread over all four shards
  });
});
