/**
 * The sandbox's inconsistencies (packages/sandbox/src/inconsistencies.ts), each seen on the wire and
 * counted in stats().inconsistencies: a lagging replica behind the same port (rows, counts and
 * resolve alike), a CDN serving bodies cached before a reorganisation, empty answers for slices
 * with rows, block times in milliseconds, the neighbouring slice's answer, cut full pages; each
 * drawn per request from the seed, and all ending with consistent(), POST /_sandbox/consistent or
 * after consistentAfterRequests.
 */
import { describe, expect, it } from 'vitest';
import { buildSandboxData, type Sandbox } from '@insight-export/sandbox';
import { getJson } from '../helpers/sandbox.js';
import { withSandbox } from '../helpers/knob-sandbox.js';

const data = buildSandboxData({ seed: 21, transactions: 6_000 });
const alice = data.wallets[0]!.address;
const chain1 = data.chain(1)!;
/** 2024-02-02T12:00:00Z: the lagging replica's height in these tests (the chain goes on to the 4th). */
const T = Date.parse('2024-02-02T12:00:00Z') / 1000;

const rowsUrl = (s: Sandbox, qs: string, limit = 1000) =>
  `${s.url}/wallets/${alice}/transactions?chain_id=1&sort_by=block_number&limit=${limit}&${qs}`;
const countUrl = (s: Sandbox) => `${s.url}/wallets/${alice}/transactions?chain_id=1&aggregate=count() AS n`;
const text = async (url: string) => (await fetch(url)).text();

describe('replicaLag: a lagging replica behind the same port', () => {
  it('at rate 1 answers rows, counts and resolve as an index that reaches replicaLagUntil only, and counts it', async () => {
    await withSandbox({ data, replicaLag: 1, replicaLagUntil: T }, (lagging) =>
      withSandbox({ data, indexedUntil: T }, async (behind) => {
        const asked = [
          (s: Sandbox) => rowsUrl(s, `filter_block_timestamp_gte=${T - 86_400}`),
          (s: Sandbox) => countUrl(s),
          (s: Sandbox) => `${s.url}/resolve/${chain1.headBlock}?chain_id=1`,
          (s: Sandbox) => `${s.url}/resolve/${chain1.firstBlock}?chain_id=1`,
        ];
        for (const url of asked) expect(await text(url(lagging))).toBe(await text(url(behind)));
        const rows = (await getJson(asked[0]!(lagging))).body.data as { block_timestamp: number }[];
        expect(rows.length).toBeGreaterThan(0);
        expect(Math.max(...rows.map((r) => r.block_timestamp))).toBeLessThanOrEqual(T);
        expect((await getJson(asked[2]!(lagging))).body.data.blocks).toEqual([]);
        // six answers; the full index has rows past T for the rows and the count, and the head block; not the first block
        expect(lagging.stats().inconsistencies).toEqual({ replicaLag: 6, replicaLagMissed: 5 });
      }),
    );
  });

  it('is drawn per request from the seed: the same answers in the same order on another server of the same seed', async () => {
    const sequence = async (s: Sandbox) => {
      const out: number[] = [];
      for (let i = 0; i < 30; i++) out.push(((await getJson(countUrl(s))).body.aggregations[0] as { n: number }).n);
      return out;
    };
    const [a, b, stats] = await withSandbox({ data, replicaLag: 0.4, replicaLagUntil: T }, async (s) => {
      const a = await sequence(s);
      return [a, await withSandbox({ data, replicaLag: 0.4, replicaLagUntil: T }, sequence), s.stats()] as const;
    });
    expect(a).toEqual(b);
    const values = [...new Set(a)].sort((x, y) => x - y);
    expect(values).toHaveLength(2);
    expect(stats.inconsistencies.replicaLag).toBe(a.filter((n) => n === values[0]).length);
    expect(stats.inconsistencies.replicaLag).toBeGreaterThan(3);
    expect(stats.inconsistencies.replicaLag).toBeLessThan(27);
  });

  it('without replicaLagUntil it is replicaLagBehindSeconds (default a day) behind the newest block served', async () => {
    const newest = Math.max(...data.chains.map((c) => c.headTimestamp));
    for (const [behind, height] of [
      [undefined, newest - 86_400],
      [3_600, newest - 3_600],
    ] as const) {
      await withSandbox({ data, replicaLag: 1, replicaLagBehindSeconds: behind }, async (s) =>
        withSandbox({ data, indexedUntil: height }, async (truth) => {
          const qs = `filter_block_timestamp_gte=${newest - 2 * 86_400}`;
          expect(await text(rowsUrl(s, qs))).toBe(await text(rowsUrl(truth, qs)));
        }),
      );
    }
  });

  it('ends with consistent(), POST /_sandbox/consistent or after consistentAfterRequests requests', async () => {
    const fullCount = await withSandbox({ data }, async (s) => text(countUrl(s)));
    await withSandbox({ data, replicaLag: 1, replicaLagUntil: T }, async (s) => {
      expect(await text(countUrl(s))).not.toBe(fullCount);
      s.consistent();
      expect(await text(countUrl(s))).toBe(fullCount);
      s.setInconsistencies({ replicaLag: 1 });
      expect(await text(countUrl(s))).not.toBe(fullCount);
      const res = await fetch(`${new URL(s.url).origin}/_sandbox/consistent`, { method: 'POST' });
      expect(await res.json()).toEqual({ consistent: true });
      expect(await text(countUrl(s))).toBe(fullCount);
    });
    await withSandbox({ data, replicaLag: 1, replicaLagUntil: T, consistentAfterRequests: 3 }, async (s) => {
      const answers: boolean[] = [];
      for (let i = 0; i < 6; i++) answers.push((await text(countUrl(s))) === fullCount);
      expect(answers).toEqual([false, false, false, true, true, true]);
      expect(s.stats().inconsistencies.replicaLag).toBe(3);
    });
  });
});

describe('staleCache: a CDN keyed by URL serving bodies cached before a reorganisation', () => {
  it('serves the body a URL got before the reorganisation, list and resolve alike; never before one; not after consistent()', async () => {
    await withSandbox({ transactions: 6_000, seed: 21, staleCache: 1 }, async (s) => {
      const c = s.data.chain(8453)!;
      const urls = [
        `${s.url}/wallets/${alice}/transactions?chain_id=8453&filter_block_number_gte=${c.headBlock - 3_000}&limit=1000`,
        `${s.url}/resolve/${c.headBlock}?chain_id=8453`,
      ];
      const before = await Promise.all(urls.map(text));
      expect(await Promise.all(urls.map(text))).toEqual(before);
      expect(s.stats().inconsistencies).toEqual({});
      const origin = new URL(s.url).origin;
      expect((await fetch(`${origin}/_sandbox/reorg?chain_id=8453&depth=2000`, { method: 'POST' })).status).toBe(200);
      expect(await Promise.all(urls.map(text))).toEqual(before);
      expect(s.stats().inconsistencies).toEqual({ staleCache: 2 });
      // the same request under another URL is the service's answer: the new branch
      const fresh = await text(`${s.url}/resolve/${c.headBlock}?chain_id=8453&x=1`);
      expect(JSON.parse(fresh).data.blocks[0].block_hash).not.toBe(JSON.parse(before[1]!).data.blocks[0].block_hash);
      s.consistent();
      const after = await Promise.all(urls.map(text));
      expect(after[0]).not.toBe(before[0]);
      expect(JSON.parse(after[1]!).data.blocks[0].block_hash).toBe(JSON.parse(fresh).data.blocks[0].block_hash);
      expect(s.stats().inconsistencies).toEqual({ staleCache: 2 });
    });
  });
});

describe('answers that are pages, but wrong for the request', () => {
  const qs = `filter_block_number_gte=${chain1.firstBlock}&filter_block_number_lt=${chain1.firstBlock + 5_000}`;

  it('emptyAnswers: a slice with rows answers HTTP 200 with data [] and no items; empty slices and aggregates are left alone', async () => {
    await withSandbox({ data, emptyAnswers: 1 }, async (s) => {
      const plain = await withSandbox({ data }, async (p) => (await getJson(rowsUrl(p, qs))).body);
      expect(plain.data.length).toBeGreaterThan(10);
      const { status, body } = await getJson(rowsUrl(s, qs));
      expect(status).toBe(200);
      expect(body).toEqual({ ...plain, meta: { ...plain.meta, total_items: 0 }, data: [] });
      expect((await getJson(rowsUrl(s, `filter_block_number_gt=${chain1.headBlock}`))).body.data).toEqual([]);
      expect((await getJson(countUrl(s))).body.aggregations[0].n).toBeGreaterThan(0);
      expect(s.stats().inconsistencies).toEqual({ emptyAnswer: 1 });
    });
  });

  it('millisecondTimestamps: every row of the page has block_timestamp × 1000, nothing else changed', async () => {
    await withSandbox({ data, millisecondTimestamps: 1 }, async (s) => {
      const plain = await withSandbox({ data }, async (p) => (await getJson(rowsUrl(p, qs))).body);
      const { body } = await getJson(rowsUrl(s, qs));
      expect(body).toEqual({ ...plain, data: plain.data.map((r: any) => ({ ...r, block_timestamp: r.block_timestamp * 1000 })) });
      expect(s.stats().inconsistencies).toEqual({ millisecondTimestamps: 1 });
    });
  });

  it('neighbourSlices: the answer of the same-width range just below or above, block or time; an unbounded request as asked', async () => {
    await withSandbox({ data, neighbourSlices: 1 }, async (s) =>
      withSandbox({ data }, async (plain) => {
        const lo = chain1.firstBlock + 10_000;
        const w = 2_000;
        const slice = (from: number, axis = 'block_number') => `filter_${axis}_gte=${from}&filter_${axis}_lt=${from + w}`;
        const below = await text(rowsUrl(plain, slice(lo - w)));
        const above = await text(rowsUrl(plain, slice(lo + w)));
        expect(below).not.toBe(above);
        const seen = new Set<string>();
        for (let i = 0; i < 12; i++) {
          const got = await text(rowsUrl(s, slice(lo)));
          expect([below, above]).toContain(got);
          seen.add(got);
        }
        expect(seen.size).toBe(2);
        const t = chain1.firstTimestamp + 86_400;
        const byTime = await text(rowsUrl(s, slice(t, 'block_timestamp')));
        expect([
          await text(rowsUrl(plain, slice(t - w, 'block_timestamp'))),
          await text(rowsUrl(plain, slice(t + w, 'block_timestamp'))),
        ]).toContain(byTime);
        // only one bound: nothing to shift by
        expect(await text(rowsUrl(s, `filter_block_number_gte=${lo}`))).toBe(await text(rowsUrl(plain, `filter_block_number_gte=${lo}`)));
        expect(s.stats().inconsistencies).toEqual({ neighbourSlice: 13 });
      }),
    );
  });

  it('cutFullPages is counted: each answer it cut', async () => {
    await withSandbox({ data, cutFullPages: 1 }, async (s) => {
      expect((await getJson(rowsUrl(s, qs, 10))).body.data).toHaveLength(9);
      expect((await getJson(rowsUrl(s, `filter_block_number_gt=${chain1.headBlock}`))).body.data).toEqual([]);
      expect(s.stats().inconsistencies).toEqual({ cutFullPage: 1 });
    });
  });

  it('setInconsistencies turns one on and off while the server runs; the draws are seeded', async () => {
    await withSandbox({ data }, async (s) => {
      expect((await getJson(rowsUrl(s, qs))).body.data.length).toBeGreaterThan(0);
      s.setInconsistencies({ emptyAnswers: 1 });
      expect((await getJson(rowsUrl(s, qs))).body.data).toEqual([]);
      s.setInconsistencies({ emptyAnswers: 0 });
      expect((await getJson(rowsUrl(s, qs))).body.data.length).toBeGreaterThan(0);
      expect(() => s.setInconsistencies({ neighbourSlices: 2 })).toThrow(/neighbourSlices/);
    });
    const emptied = (rate: number) =>
      withSandbox({ data, emptyAnswers: rate }, async (s) => {
        const out: boolean[] = [];
        for (let i = 0; i < 20; i++) out.push((await getJson(rowsUrl(s, qs))).body.data.length === 0);
        return out;
      });
    const a = await emptied(0.3);
    expect(a).toEqual(await emptied(0.3));
    expect(a.filter(Boolean).length).toBeGreaterThan(1);
    expect(a.filter(Boolean).length).toBeLessThan(15);
  });
});
