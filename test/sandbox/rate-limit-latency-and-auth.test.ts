import { describe, expect, it } from 'vitest';
import { startSandbox } from '@insight-export/sandbox';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 1_000, seed: 2 });

describe('rate limit', () => {
  it('answers requests over requestsPerSecond with 429 {"error"} and Retry-After, then recovers', async () => {
    sandbox.setRateLimit({ requestsPerSecond: 5, retryAfterSeconds: 2 });
    try {
      const responses = await Promise.all(Array.from({ length: 15 }, () => fetch(`${sandbox.url}/resolve/1`)));
      const limited = responses.filter((r) => r.status === 429);
      const ok = responses.filter((r) => r.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(5);
      expect(ok.length).toBeLessThanOrEqual(7); // the bucket refills while the burst is served
      expect(limited.length).toBe(15 - ok.length);
      for (const r of limited) {
        expect(r.headers.get('retry-after')).toBe('2');
        expect(Object.keys((await r.json()) as object)).toEqual(['error']);
      }
      await new Promise((r) => setTimeout(r, 450));
      expect((await fetch(`${sandbox.url}/resolve/1`)).status).toBe(200);
    } finally {
      sandbox.setRateLimit(null);
    }
    const again = await Promise.all(Array.from({ length: 15 }, () => fetch(`${sandbox.url}/resolve/1`)));
    expect(again.every((r) => r.status === 200)).toBe(true);
  });
});

describe('latency', () => {
  it('delays every answer by fixedMs plus up to jitterMs', async () => {
    sandbox.setLatency({ fixedMs: 250, jitterMs: 50 });
    try {
      const times: number[] = [];
      for (let i = 0; i < 4; i++) {
        const t0 = performance.now();
        await (await fetch(`${sandbox.url}/resolve/1`)).arrayBuffer();
        times.push(performance.now() - t0);
      }
      for (const t of times) expect(t).toBeGreaterThanOrEqual(245);
      expect(Math.min(...times)).toBeLessThan(1_000);
    } finally {
      sandbox.setLatency(null);
    }
    const t0 = performance.now();
    await (await fetch(`${sandbox.url}/resolve/1`)).arrayBuffer();
    expect(performance.now() - t0).toBeLessThan(200);
  });
});

describe('auth', () => {
  it('401s requests without a matching x-client-id or x-secret-key', async () => {
    const secured = await startSandbox({ transactions: 500, auth: { clientId: 'cid-123', secretKey: 'sk-456' } });
    try {
      const url = `${secured.url}/resolve/1`;
      const none = await fetch(url);
      expect(none.status).toBe(401);
      expect(Object.keys((await none.json()) as object)).toEqual(['error']);
      expect((await fetch(url, { headers: { 'x-client-id': 'wrong' } })).status).toBe(401);
      expect((await fetch(url, { headers: { 'x-client-id': 'cid-123' } })).status).toBe(200);
      expect((await fetch(url, { headers: { 'x-secret-key': 'sk-456' } })).status).toBe(200);
      expect(secured.stats().byStatus[401]).toBe(2);
    } finally {
      await secured.close();
    }
  });
});
