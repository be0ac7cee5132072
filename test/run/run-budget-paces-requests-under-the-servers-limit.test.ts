import { afterAll, describe, expect, it } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import { runRateLimiter } from '../../src/run/source-session.js';
import { useSandbox } from '../helpers/sandbox.js';

const RPS = 20;
// A server that allows RPS requests per second (a bucket of RPS), 429 + Retry-After beyond it.
const sandbox = useSandbox({ transactions: 2_000, rateLimit: { requestsPerSecond: RPS, retryAfterSeconds: 1 } });
const clients: InsightClient[] = [];
afterAll(async () => Promise.all(clients.map((c) => c.close())));

describe('the run request budget (requests_per_second)', () => {
  it('spaces requests evenly a little under the budget: no burst, no 429 from a server with the same limit', async () => {
    const limiter = runRateLimiter(RPS);
    expect(limiter.burst).toBeLessThanOrEqual(2);
    expect(limiter.requestsPerSecond).toBeLessThan(RPS);
    expect(limiter.requestsPerSecond).toBeGreaterThanOrEqual(0.95 * RPS);

    const client = new InsightClient({ baseUrl: sandbox.url, rateLimiter: limiter, maxInFlight: 8, backoff: { baseMs: 0, maxMs: 0 } });
    clients.push(client);
    const wallet = sandbox.data.wallets[0]!.address;
    const n = 60;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: n }, (_, page) => client.walletTransactions(wallet, { chainIds: [1], limit: 1, page: page % 20 })),
    );
    const seconds = (performance.now() - t0) / 1000;
    expect(client.stats.status429).toBe(0);
    expect(client.stats.requests).toBe(n);
    // Paced: n requests never go out faster than the budget allows (2 at once, then one per 1/rate).
    expect(seconds).toBeGreaterThanOrEqual((n - 2) / limiter.requestsPerSecond - 0.05);
  });
});
