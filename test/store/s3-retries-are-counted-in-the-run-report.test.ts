/**
 * Issue 31 item 7: the report's `retries` stayed 0 while S3 operations were retried. The S3 store
 * counts every retried attempt (the SDK's own and the store's tries after StoreUnavailableError),
 * and the report carries them as `store_retries` (`retries` stays the service's).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildReport } from '../../src/run/report.js';
import type { InsightClient } from '../../src/source/client.js';
import type { Job } from '../../src/job/schema.js';
import type { Plan } from '../../src/plan/index.js';
import { S3Store } from '../../src/store/s3.js';

let server: Server;
let endpoint = '';
/** HEAD requests received, and how many of the first ones are answered 503. */
let received = 0;
let failFirst = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    if (received <= failFirst) {
      res.writeHead(503, { 'content-type': 'application/xml' }).end();
      return;
    }
    res.writeHead(200, { etag: '"abc"', 'content-length': '5', 'last-modified': new Date(0).toUTCString() }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

it.each([2, 5])(
  '%i answers 503 then 200: every attempt after the first is a retry, and the report says so',
  { timeout: 30_000 },
  async (fails) => {
    received = 0;
    failFirst = fails;
    const store = new S3Store({
      bucket: 'b',
      endpoint,
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'secret' },
      maxAttempts: 3,
      retryBudgetMs: 20_000,
    });
    try {
      expect(await store.head('k')).toMatchObject({ key: 'k', size: 5, etag: 'abc' });
    } finally {
      await store.close();
    }
    expect(received).toBe(fails + 1);
    expect(store.stats.retries).toBe(fails);

    const report = buildReport({
      job: { name: 'j' } as Job,
      runId: 'r',
      started: Date.now(),
      plan: { units: [], coverage: [], clamped: [], axis: 'time' } as unknown as Plan,
      outcomes: [],
      destination: store.location,
      client: {
        stats: { requests: 3, retries: 0, status429: 0, failures: 0, bytesReceived: 0, byChain: new Map() },
      } as unknown as InsightClient,
      storeStats: store.stats,
      interrupted: false,
    });
    expect(report.store_retries).toBe(fails);
    expect(report.retries).toBe(0);
  },
);
