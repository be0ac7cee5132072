/**
 * Rows the service sends that are not the request's (another wallet's, another chain's) are never
 * yielded and are counted, and they still count toward the limit: an answer that is full only with
 * them is split, never taken as the whole slice (which would lose the rows the limit cut off).
 */
import { describe, expect, it } from 'vitest';
import { newPagingStats, pageWindow, type RecordPage } from '../../src/source/paginator.js';
import { blockWindowOptions, fakeService, makeRows, type Misbehaviour, type Rec } from './paginator-fixtures.js';

async function rowsOf(gen: AsyncGenerator<RecordPage<Rec> | { chainId: number; done: true }>): Promise<Rec[]> {
  const rows: Rec[] = [];
  for await (const b of gen) if (!('done' in b)) rows.push(...b.records);
  return rows;
}

/** A copy of `r` at the same position: another wallet's (foreign) or another chain's (served with r's chain). */
function intruder(r: Rec, kind: 'foreign' | 'other-chain'): Rec {
  return kind === 'foreign'
    ? { ...r, id: `${r.id}:other-wallet`, foreign: true }
    : { ...r, chain: 777, id: `777:${r.block}:${r.index}`, servedWith: r.chain };
}

describe('rows not of the request', () => {
  for (const misbehave of [[], ['union', 'shuffle-ties']] as Misbehaviour[][]) {
    it(`are dropped and counted, and full answers made full by them are split (${misbehave.join(' + ') || 'contract'})`, async () => {
      const truth = [...makeRows(1, 80, (b) => 1 + (b % 4), 1000, 7), ...makeRows(8453, 40, () => 2)];
      // Every third row has another wallet's row beside it, every fifth another chain's.
      const intruders = truth.flatMap((r, i) => [
        ...(i % 3 === 0 ? [intruder(r, 'foreign')] : []),
        ...(i % 5 === 0 ? [intruder(r, 'other-chain')] : []),
      ]);
      const src = fakeService([...truth, ...intruders], misbehave, 3);
      const stats = newPagingStats();
      const rows = await rowsOf(
        pageWindow({
          ...blockWindowOptions(src.fetch, { chainIds: [1, 8453], start: 1000, end: 1080, limit: 8, prefetch: 3 }),
          reject: (r) => (r.foreign ? 'other_wallet' : null),
          stats,
        }),
      );
      const byPosition = (a: Rec, b: Rec) => a.chain - b.chain || a.block - b.block || a.index - b.index;
      expect(rows.map((r) => r.id).sort()).toEqual(truth.map((r) => r.id).sort());
      expect([...rows].sort(byPosition)).toEqual([...truth].sort(byPosition));
      // Full answers were split: many requests, and every intruder the service sent was counted once.
      expect(stats.splits).toBeGreaterThan(5);
      const counted = [...stats.rejected.values()];
      expect(counted.reduce((n, c) => n + (c.other_wallet ?? 0), 0)).toBe(src.intruders.foreign);
      expect(counted.reduce((n, c) => n + (c.other_chain ?? 0), 0)).toBe(src.intruders.otherChain);
      expect(src.intruders.foreign).toBeGreaterThan(10);
      expect(src.intruders.otherChain).toBeGreaterThan(10);
      expect(stats.rejectedExample?.reason).toMatch(/^other_(wallet|chain)$/);
    });
  }
});
