import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutOnGrid, contains, gaps, intersect, merge, subtract, totalLength, type Interval } from '../../src/plan/intervals.js';

/** The model: a set of integer points in [0, 64). */
const N = 64;
const arbInterval = fc
  .tuple(fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N }))
  .map(([a, b]): Interval => ({ start: a, end: b }));
const arbSet = fc.array(arbInterval, { maxLength: 8 });

function points(set: readonly Interval[]): Set<number> {
  const out = new Set<number>();
  for (const i of set) for (let p = i.start; p < i.end; p++) out.add(p);
  return out;
}
const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);

function isNormalised(set: Interval[]): boolean {
  return set.every((i, k) => i.start < i.end && (k === 0 || set[k - 1]!.end < i.start));
}

describe('interval sets behave like sets of points', () => {
  it('merge keeps the points and gives sorted, disjoint, non-touching intervals', () => {
    fc.assert(
      fc.property(arbSet, (set) => {
        const m = merge(set);
        expect(isNormalised(m)).toBe(true);
        expect(sorted(points(m))).toEqual(sorted(points(set)));
      }),
    );
  });

  it('subtract(a, b) = points of a not in b', () => {
    fc.assert(
      fc.property(arbSet, arbSet, (a, b) => {
        const r = subtract(a, b);
        const pb = points(b);
        expect(isNormalised(r)).toBe(true);
        expect(sorted(points(r))).toEqual(sorted(points(a)).filter((p) => !pb.has(p)));
      }),
    );
  });

  it('intersect(a, b) = points in both', () => {
    fc.assert(
      fc.property(arbSet, arbSet, (a, b) => {
        const pb = points(b);
        expect(sorted(points(intersect(a, b)))).toEqual(sorted(points(a)).filter((p) => pb.has(p)));
      }),
    );
  });

  it('contains: a point or interval is covered exactly when all its points are', () => {
    fc.assert(
      fc.property(arbSet, arbInterval, fc.integer({ min: 0, max: N }), (set, probe, p) => {
        const ps = points(set);
        expect(contains(set, p)).toBe(ps.has(p));
        expect(contains(set, probe)).toBe([...points([probe])].every((x) => ps.has(x)));
      }),
    );
  });

  it('gaps(set, within) + (set within) = within, without overlap', () => {
    fc.assert(
      fc.property(arbSet, arbInterval, (set, within) => {
        const g = gaps(set, within);
        const covered = intersect(set, [within]);
        expect(intersect(g, covered)).toEqual([]);
        expect(sorted(points([...g, ...covered]))).toEqual(sorted(points([within])));
        expect(totalLength(g) + totalLength(covered)).toBe(Math.max(0, within.end - within.start));
      }),
    );
  });

  it('cutOnGrid cuts only at grid multiples and keeps every point once', () => {
    fc.assert(
      fc.property(arbInterval, fc.integer({ min: 1, max: 20 }), (i, size) => {
        const pieces = cutOnGrid(i, size);
        expect(sorted(points(pieces))).toEqual(sorted(points([i])));
        expect(totalLength(pieces)).toBe(pieces.reduce((n, p) => n + p.end - p.start, 0));
        for (const p of pieces) {
          expect(p.start).toBeLessThan(p.end);
          expect(Math.floor(p.start / size)).toBe(Math.floor((p.end - 1) / size));
          if (p.start !== i.start) expect(p.start % size).toBe(0);
          if (p.end !== i.end) expect(p.end % size).toBe(0);
        }
      }),
    );
  });
});
