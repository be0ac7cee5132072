/**
 * What a stopping run commits rests on it (src/run/stop-cut.ts): once the paginator has yielded a
 * batch saying a chain is proven to a point of the window's axis, every row of the chain below
 * that point has been yielded, none at or above it unless a one-block slice is being cut on a
 * finer axis; and the points a chain is proven to only grow, up to the window's end. Whatever
 * the service's order, repeats and stray rows, for shared and dense chains alike.
 */
import { describe, expect, it } from 'vitest';
import { pageWindow } from '../../src/source/paginator.js';
import { blockWindowOptions, fakeService, makeRows, type Misbehaviour, type Rec } from './paginator-fixtures.js';

const BEHAVIOURS: Misbehaviour[][] = [[], ['shuffle-ties', 'union', 'repeat-earlier', 'outside-slice']];

describe('provenTo', () => {
  for (const misbehave of BEHAVIOURS) {
    it(`a chain proven to P has yielded exactly its rows below P (${misbehave.join(' + ') || 'the contract'})`, async () => {
      // Chain 1 dense with one block of 3.5 pages (cut on the index axis), chain 8453 sparse, 42161 dense.
      const truth = [
        ...makeRows(1, 60, (b) => (b === 31 ? 35 : 1 + ((b * 7) % 9))),
        ...makeRows(8453, 5, () => 1),
        ...makeRows(42161, 80, () => 3),
      ];
      for (const seed of [1, 2]) {
        const src = fakeService(truth, misbehave, seed);
        const yielded = new Map<number, Set<string>>();
        const proven = new Map<number, number[]>();
        for await (const b of pageWindow(
          blockWindowOptions(src.fetch, { chainIds: [1, 8453, 42161], start: 1000, end: 1080, limit: 10, prefetch: 3 }),
        )) {
          if ('done' in b) continue;
          const seen = yielded.get(b.chainId) ?? new Set<string>();
          yielded.set(b.chainId, seen);
          for (const r of b.records) seen.add(r.id);
          if (b.provenTo === undefined) continue;
          const p = b.provenTo;
          proven.set(b.chainId, [...(proven.get(b.chainId) ?? []), p]);
          const below = (r: Rec) => r.chain === b.chainId && r.block < p;
          expect([...seen].sort()).toEqual(
            truth
              .filter(below)
              .map((r) => r.id)
              .sort(),
          );
        }
        // The dense chains were proven piece by piece, in order, to the window's end.
        for (const chain of [1, 42161]) {
          const points = proven.get(chain)!;
          expect(points.length).toBeGreaterThan(2);
          expect(points).toEqual([...points].sort((a, b) => a - b));
          expect(points.at(-1)).toBe(1080);
        }
      }
    });
  }
});
