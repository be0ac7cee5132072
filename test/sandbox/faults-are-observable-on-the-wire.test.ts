import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 2_000, seed: 5 });
const path = () => `${sandbox.url}/wallets/${sandbox.data.wallets[0]!.address}/transactions?limit=200`;

describe('injected faults', () => {
  for (const status of [500, 502, 503] as const) {
    it(`http${status}: status ${status} with {"error"}`, async () => {
      sandbox.setFaults({ rates: { [`http${status}`]: 1 } });
      try {
        const res = await fetch(path());
        expect(res.status).toBe(status);
        expect(Object.keys((await res.json()) as object)).toEqual(['error']);
      } finally {
        sandbox.setFaults(null);
      }
    });
  }

  it('http429: 429 with Retry-After when configured, without it otherwise', async () => {
    sandbox.setFaults({ rates: { http429: 1 }, retryAfterSeconds: 3 });
    let res = await fetch(path());
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(Object.keys((await res.json()) as object)).toEqual(['error']);
    sandbox.setFaults({ rates: { http429: 1 } });
    res = await fetch(path());
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBeNull();
    await res.body?.cancel();
    sandbox.setFaults(null);
  });

  it('reset: the connection is reset before the response or in the middle of its body', async () => {
    sandbox.setFaults({ rates: { reset: 1 }, seed: 3 });
    const outcomes = new Set<string>();
    try {
      for (let i = 0; i < 16; i++) {
        const outcome = await request(path()).then(
          async (res) => {
            expect(res.statusCode).toBe(200);
            return res.body.text().then(
              () => 'complete',
              () => 'body-error',
            );
          },
          (e: Error & { code?: string }) => {
            expect(e.code).toMatch(/UND_ERR_SOCKET|ECONNRESET/);
            return 'request-error';
          },
        );
        outcomes.add(outcome);
      }
    } finally {
      sandbox.setFaults(null);
    }
    expect(outcomes).toEqual(new Set(['request-error', 'body-error']));
  });

  it('truncate: Content-Length promises more than arrives, then the connection closes', async () => {
    sandbox.setFaults({ rates: { truncate: 1 } });
    try {
      const res = await request(path());
      expect(res.statusCode).toBe(200);
      const promised = Number(res.headers['content-length']);
      let received = 0;
      const err = await (async () => {
        for await (const chunk of res.body) received += (chunk as Buffer).length;
      })().then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(err).not.toBeNull();
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(promised);
    } finally {
      sandbox.setFaults(null);
    }
  });

  it('stall: headers and part of the body arrive, then silence for stallMs, then the connection closes', async () => {
    sandbox.setFaults({ rates: { stall: 1 }, stallMs: 700 });
    try {
      const res = await request(path());
      expect(res.statusCode).toBe(200);
      const promised = Number(res.headers['content-length']);
      let received = 0;
      let lastChunkAt = 0;
      const err = await (async () => {
        for await (const chunk of res.body) {
          received += (chunk as Buffer).length;
          lastChunkAt = performance.now();
        }
      })().then(
        () => null,
        (e: unknown) => e as Error,
      );
      const silence = performance.now() - lastChunkAt;
      expect(err).not.toBeNull();
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(promised);
      expect(silence).toBeGreaterThanOrEqual(600);
    } finally {
      sandbox.setFaults(null);
    }
  });

  it('is seeded, limited to the configured routes, and counted in stats', async () => {
    const run = async () => {
      sandbox.setFaults({ rates: { http500: 0.3, http503: 0.2 }, seed: 77, routes: ['transactions'] });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        const res = await fetch(path());
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      return statuses;
    };
    sandbox.resetStats();
    const a = await run();
    const stats = sandbox.stats();
    const b = await run();
    expect(a).toEqual(b);
    expect(a.filter((s) => s === 500).length).toBeGreaterThan(3);
    expect(a.filter((s) => s === 503).length).toBeGreaterThan(1);
    expect(a.filter((s) => s === 200).length).toBeGreaterThan(10);
    expect(stats.faultsInjected.http500).toBe(a.filter((s) => s === 500).length);
    expect(stats.byStatus[200]).toBe(a.filter((s) => s === 200).length);
    expect(stats.byRoute.transactions).toBe(40);
    // a route outside `routes` never faults
    for (let i = 0; i < 20; i++) expect((await fetch(`${sandbox.url}/resolve/1`)).status).toBe(200);
    sandbox.setFaults(null);
  });

  it('the first faults given come in order before the rates apply', async () => {
    sandbox.setFaults({ rates: {}, first: ['http503', 'http429', 'http500'] });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await fetch(path());
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses).toEqual([503, 429, 500, 200, 200]);
    } finally {
      sandbox.setFaults(null);
    }
  });
});
