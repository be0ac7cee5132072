/**
 * The client against the sandbox's injected faults, rate limit, auth and older wire types:
 * retries must deliver exactly the ground-truth rows, and give up with typed errors.
 */
import { describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '@insight-export/sandbox';
import { InsightClient, type ClientOptions } from '../../src/source/client.js';
import { HttpStatusError, RequestTimeoutError, RetriesExhaustedError } from '../../src/source/errors.js';
import { TokenBucket } from '../../src/source/rate-limiter.js';
import type { TransactionRecord } from '../../src/source/records.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const { servers: sandboxes, clients } = closeAfterEach();

async function setup(sb: SandboxOptions, opts: Partial<ClientOptions> = {}) {
  const sandbox = await startSandbox({ seed: 11, transactions: 3000, ...sb });
  sandboxes.push(sandbox);
  const client = new InsightClient({
    baseUrl: sandbox.url,
    explorerBaseUrl: sandbox.explorerUrl,
    backoff: { baseMs: 1, maxMs: 10 },
    ...opts,
  });
  clients.push(client);
  return { sandbox, client };
}

async function allRows(client: InsightClient, wallet: string, chainId: number, limit: number): Promise<TransactionRecord[]> {
  const rows: TransactionRecord[] = [];
  for (let page = 0; ; page++) {
    const res = await client.walletTransactions(wallet, { chainIds: [chainId], sortBy: 'block_number', sortOrder: 'asc', limit, page });
    rows.push(...res.data);
    if (res.data.length < limit) return rows;
  }
}

function truth(sandbox: Sandbox, wallet: string, chainId: number): TransactionRecord[] {
  return sandbox.data.allWalletTransactions(
    wallet,
    sandbox.data.parseTransactionsQuery(`chain_id=${chainId}&sort_by=block_number&sort_order=asc`),
  );
}

describe('faults', () => {
  it('every fault kind at once: retries deliver exactly the ground-truth rows', async () => {
    const { sandbox, client } = await setup(
      {
        faults: {
          rates: { http500: 0.07, http502: 0.07, http503: 0.07, http429: 0.07, reset: 0.07, truncate: 0.07, stall: 0.05 },
          stallMs: 5_000,
          seed: 3,
        },
      },
      { timeoutMs: 250, maxAttempts: 12 },
    );
    const chainId = sandbox.data.chains[0]!.chainId;
    // Wallets 1-3 take several pages each, the next ones one page: ~60 good answers to get through.
    const wallets = sandbox.data.wallets.slice(1, 40);
    for (const w of wallets) {
      const rows = await allRows(client, w.address, chainId, 10);
      expect(rows).toEqual(truth(sandbox, w.address, chainId).map((r) => ({ ...r, decoded: null })));
    }
    const injected = sandbox.stats().faultsInjected;
    for (const kind of ['http500', 'http502', 'http503', 'http429', 'reset', 'truncate', 'stall']) {
      expect(
        injected[kind] ?? 0,
        `fault ${kind} was exercised: ${JSON.stringify(injected)} of ${sandbox.stats().requests}`,
      ).toBeGreaterThan(0);
    }
    const faults = Object.values(injected).reduce((a, b) => a + b, 0);
    expect(client.stats.retries).toBe(faults);
    expect(client.stats.requests).toBe(sandbox.stats().requests);
    expect(client.stats.failures).toBe(0);
  });

  it('a route that always fails ends in RetriesExhaustedError after maxAttempts requests', async () => {
    const { sandbox, client } = await setup({ faults: { rates: { http503: 1 } } }, { maxAttempts: 4 });
    const err = await client.resolve('1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as RetriesExhaustedError).attempts).toBe(4);
    expect((err as Error).message).toContain('after 4 attempts');
    expect(((err as RetriesExhaustedError).lastCause as HttpStatusError).status).toBe(503);
    expect(sandbox.stats().requests).toBe(4);
  });

  it('a stalled body times out on every attempt', async () => {
    const { sandbox, client } = await setup({ faults: { rates: { stall: 1 }, stallMs: 10_000 } }, { maxAttempts: 2, timeoutMs: 200 });
    const err = await client.walletTransactions(sandbox.data.wallets[0]!.address, { chainIds: [1] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    const cause = (err as RetriesExhaustedError).lastCause as RequestTimeoutError;
    expect(cause).toBeInstanceOf(RequestTimeoutError);
    expect(cause.phase).toBe('body');
  });

  it('injected 429s with Retry-After are waited out', async () => {
    const { sandbox, client } = await setup(
      { faults: { rates: { http429: 0.5 }, retryAfterSeconds: 1, seed: 5, routes: ['resolve'] } },
      {
        backoff: { baseMs: 0, maxMs: 0 },
      },
    );
    const t0 = performance.now();
    for (let i = 0; i < 3; i++) await client.resolve(String(sandbox.data.chains[0]!.firstBlock + i));
    const waited = client.stats.status429;
    expect(waited).toBeGreaterThan(0);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(waited * 1000 - 50);
  });
});

describe('rate limit', () => {
  it('without a budget the sandbox answers 429 and the client waits Retry-After; with a budget below the limit, no 429', async () => {
    const { sandbox, client } = await setup({ rateLimit: { requestsPerSecond: 5, retryAfterSeconds: 1 } });
    const block = sandbox.data.chains[0]!.firstBlock;
    await Promise.all(Array.from({ length: 8 }, (_, i) => client.resolve(String(block + i))));
    expect(client.stats.status429).toBeGreaterThan(0);
    expect(sandbox.stats().byStatus[429]).toBe(client.stats.status429);

    sandbox.setRateLimit({ requestsPerSecond: 5, retryAfterSeconds: 1 }); // full bucket again
    const budgeted = new InsightClient({ baseUrl: sandbox.url, rateLimiter: new TokenBucket({ requestsPerSecond: 4, burst: 4 }) });
    clients.push(budgeted);
    await Promise.all(Array.from({ length: 8 }, (_, i) => budgeted.resolve(String(block + i))));
    expect(budgeted.stats.status429).toBe(0);
    expect(budgeted.stats.requests).toBe(8);
  });
});

describe('auth', () => {
  it('401 without the key (not retried), success with it', async () => {
    const { sandbox, client } = await setup({ auth: { secretKey: 'sk-test-1234' } });
    const err = await client.resolve('1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).status).toBe(401);
    expect(sandbox.stats().requests).toBe(1);
    const keyed = new InsightClient({ baseUrl: sandbox.url, secretKey: 'sk-test-1234' });
    clients.push(keyed);
    const res = await keyed.resolve(String(sandbox.data.chains[0]!.firstBlock));
    expect(res.data.blocks).toHaveLength(1);
  });
});

describe('older wire types', () => {
  it('legacy block_number strings and numeric values normalise to the ground truth', async () => {
    const { sandbox, client } = await setup({ legacyTypes: true, pathPrefix: '/v1' });
    expect(sandbox.url.endsWith('/v1')).toBe(true);
    const wallet = sandbox.data.wallets[1]!.address;
    const chainId = sandbox.data.chains[0]!.chainId;
    const rows = await allRows(client, wallet, chainId, 100);
    const expected = truth(sandbox, wallet, chainId);
    // A JSON number cannot carry a uint256 exactly: values above 2^53 lose digits on the wire.
    const exact = (v: string) => (BigInt(v) <= BigInt(Number.MAX_SAFE_INTEGER) ? v : 'big');
    expect(rows.map((r) => ({ ...r, value: exact(r.value) }))).toEqual(
      expected.map((r) => ({ ...r, decoded: null, value: exact(r.value) })),
    );
  });
});
