import { describe, expect, it } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import { TokenBucket } from '../../src/source/rate-limiter.js';
import { WALLET, fakeServer, sendJson, wireMeta } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const { servers, clients } = closeAfterEach();

describe('token bucket', () => {
  it('lets a burst through, then spaces requests at the configured rate, first come first served', async () => {
    const bucket = new TokenBucket({ requestsPerSecond: 50, burst: 2 });
    const t0 = performance.now();
    const order: number[] = [];
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        bucket.acquire().then(() => {
          order.push(i);
          times.push(performance.now() - t0);
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(times[1]!).toBeLessThan(15); // burst of 2
    // 5 more tokens at 50/s = 100 ms
    expect(times[6]!).toBeGreaterThanOrEqual(95);
    expect(times[6]!).toBeLessThan(400);
  });

  it('pauseFor holds every waiter back', async () => {
    const bucket = new TokenBucket({ requestsPerSecond: 1000, burst: 10 });
    bucket.pauseFor(150);
    const t0 = performance.now();
    await Promise.all([bucket.acquire(), bucket.acquire()]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(145);
  });

  it('rejects a non-positive rate', () => {
    expect(() => new TokenBucket({ requestsPerSecond: 0 })).toThrow(RangeError);
  });
});

describe('shared by clients', () => {
  it('two clients sharing one budget together stay under it', async () => {
    const server = await fakeServer((_q, res) => sendJson(res, 200, { meta: wireMeta(), data: [] }));
    servers.push(server);
    const bucket = new TokenBucket({ requestsPerSecond: 40, burst: 1 });
    const a = new InsightClient({ baseUrl: `${server.url}/v1`, rateLimiter: bucket });
    const b = new InsightClient({ baseUrl: `${server.url}/v1`, rateLimiter: bucket });
    clients.push(a, b);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).walletTransactions(WALLET, { chainIds: [1] })));
    // 1 immediately + 9 at 40/s = 225 ms
    expect(performance.now() - t0).toBeGreaterThanOrEqual(215);
    expect(server.requests).toHaveLength(10);
  });

  it('a 429 with Retry-After pauses the shared budget for the other requests too', async () => {
    const arrivals: number[] = [];
    let t429 = 0;
    const server = await fakeServer((_q, res, _b, n) => {
      arrivals.push(performance.now());
      if (n === 1) {
        t429 = performance.now();
        sendJson(res, 429, { error: 'slow down' }, { 'retry-after': '1' });
      } else {
        sendJson(res, 200, { meta: wireMeta(), data: [] });
      }
    });
    servers.push(server);
    const bucket = new TokenBucket({ requestsPerSecond: 1000, burst: 1000 });
    const client = new InsightClient({ baseUrl: `${server.url}/v1`, rateLimiter: bucket, backoff: { baseMs: 0, maxMs: 0 } });
    clients.push(client);
    const a = client.walletTransactions(WALLET, { chainIds: [1] });
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50)); // the 429 has been handled by now
    const b = client.walletTransactions(WALLET, { chainIds: [2] });
    await Promise.all([a, b]);
    expect(arrivals).toHaveLength(3);
    // Without the shared pause, B would have reached the server ~50 ms after the 429.
    expect(Math.min(arrivals[1]!, arrivals[2]!) - t429).toBeGreaterThanOrEqual(900);
  });
});
