import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { InsightClient, type ClientOptions } from '../../src/source/client.js';
import { HttpStatusError, NetworkError, RequestTimeoutError, ResponseShapeError, RetriesExhaustedError } from '../../src/source/errors.js';
import { WALLET, fakeServer, sendJson, wireMeta, wireTransaction, type Handler } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const okBody = () => ({ meta: wireMeta(), data: [wireTransaction(0), wireTransaction(1)] });

interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

const { servers, clients } = closeAfterEach();

async function setup(handler: Handler, opts: Partial<ClientOptions> = {}) {
  const server = await fakeServer(handler);
  servers.push(server);
  const logs: LogLine[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as LogLine);
        cb();
      },
    }),
  );
  const client = new InsightClient({
    baseUrl: `${server.url}/insights/v1`,
    backoff: { baseMs: 1, maxMs: 5 },
    timeoutMs: 2_000,
    logger,
    ...opts,
  });
  clients.push(client);
  return { server, client, logs };
}

/** Fails the first `n` requests with `fail`, then answers a good page. */
function failFirst(n: number, fail: Handler): Handler {
  return (req, res, body, count) => (count <= n ? fail(req, res, body, count) : sendJson(res, 200, okBody()));
}

async function caught(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: Error) => e,
  );
}

describe('retried faults recover', () => {
  for (const status of [500, 502, 503, 504, 429]) {
    it(`retries HTTP ${status}`, async () => {
      const { server, client, logs } = await setup(failFirst(2, (_q, res) => sendJson(res, status, { error: `boom ${status}` })));
      const page = await client.walletTransactions(WALLET, { chainIds: [1] });
      expect(page.data).toHaveLength(2);
      expect(server.requests).toHaveLength(3);
      expect(client.stats.requests).toBe(3);
      expect(client.stats.retries).toBe(2);
      expect(client.stats.status429).toBe(status === 429 ? 2 : 0);
      expect(client.stats.failures).toBe(0);
      const warns = logs.filter((l) => l.level === 40);
      expect(warns.map((l) => [l.status, l.attempt])).toEqual([
        [status, 1],
        [status, 2],
      ]);
      expect(warns[0]!.url).toBe(`${server.url}/insights/v1/wallets/${WALLET}/transactions?chain_id=1`);
      expect(typeof warns[0]!.delayMs).toBe('number');
    });
  }

  it('honours Retry-After in seconds (instead of the much shorter backoff)', async () => {
    const { server, client, logs } = await setup(
      failFirst(1, (_q, res) => sendJson(res, 429, { error: 'rate limited' }, { 'retry-after': '1' })),
      { backoff: { baseMs: 0, maxMs: 0 } },
    );
    const t0 = performance.now();
    await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
    expect(logs.find((l) => l.level === 40)!.delayMs).toBe(1000);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const { client, logs } = await setup(
      failFirst(1, (_q, res) => sendJson(res, 503, { error: 'busy' }, { 'retry-after': new Date(Date.now() + 2_000).toUTCString() })),
      { backoff: { baseMs: 0, maxMs: 0 } },
    );
    await client.walletTransactions(WALLET, { chainIds: [1] });
    const delay = logs.find((l) => l.level === 40)!.delayMs as number;
    // HTTP dates have one-second resolution.
    expect(delay).toBeGreaterThan(900);
    expect(delay).toBeLessThanOrEqual(2_000);
  });

  it('backs off exponentially with full jitter when 429 has no Retry-After', async () => {
    const { client, logs } = await setup(
      failFirst(3, (_q, res) => sendJson(res, 429, { error: 'slow down' })),
      {
        backoff: { baseMs: 40, maxMs: 100 },
        random: () => 1,
      },
    );
    const t0 = performance.now();
    await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(logs.filter((l) => l.level === 40).map((l) => l.delayMs)).toEqual([40, 80, 100]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(215);
  });

  it('retries a connection reset', async () => {
    const { server, client } = await setup(failFirst(2, (req) => req.socket.destroy()));
    const page = await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(page.data).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it('retries a body cut short by a closed connection (content-length not reached)', async () => {
    const { server, client } = await setup(
      failFirst(1, (_q, res) => {
        const text = JSON.stringify(okBody());
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': text.length });
        res.write(text.slice(0, 100));
        setTimeout(() => res.socket?.destroy(), 10);
      }),
    );
    const page = await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(page.data).toHaveLength(2);
    expect(server.requests).toHaveLength(2);
  });

  it('retries a complete response whose JSON is cut short', async () => {
    const { server, client } = await setup(failFirst(1, (_q, res) => sendJson(res, 200, JSON.stringify(okBody()).slice(0, 200))));
    await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(server.requests).toHaveLength(2);
  });

  it('retries a body that is not JSON (a proxy error page)', async () => {
    const { server, client } = await setup(failFirst(1, (_q, res) => sendJson(res, 200, '<html>Bad gateway</html>')));
    await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(server.requests).toHaveLength(2);
  });

  it('times out a stalled body and retries', async () => {
    const { server, client, logs } = await setup(
      failFirst(1, (_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 5000 });
        res.write('{"meta":{"chain_ids":[1]');
      }),
      { timeoutMs: 300 },
    );
    const t0 = performance.now();
    await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(server.requests).toHaveLength(2);
    expect(logs.find((l) => l.level === 40)!.error).toMatch(/timed out after 300 ms waiting for the response body/);
  });
});

describe('exhausted and non-retryable failures', () => {
  it('gives up after maxAttempts with a typed error saying how many attempts', async () => {
    const { server, client } = await setup((_q, res) => sendJson(res, 503, { error: 'down for maintenance' }), { maxAttempts: 3 });
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    const e = err as RetriesExhaustedError;
    expect(e.attempts).toBe(3);
    expect(e.message).toContain('after 3 attempts');
    expect(e.url).toBe(`${server.url}/insights/v1/wallets/${WALLET}/transactions?chain_id=1`);
    expect(e.lastCause).toBeInstanceOf(HttpStatusError);
    expect((e.lastCause as HttpStatusError).serverMessage).toBe('down for maintenance');
    expect(server.requests).toHaveLength(3);
    expect(client.stats.failures).toBe(1);
  });

  it('a stalled response with every attempt timing out ends in RetriesExhaustedError(RequestTimeoutError)', async () => {
    const { server, client } = await setup(() => undefined /* never answers */, { timeoutMs: 150, maxAttempts: 2 });
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    const cause = (err as RetriesExhaustedError).lastCause as RequestTimeoutError;
    expect(cause).toBeInstanceOf(RequestTimeoutError);
    expect(cause.phase).toBe('headers');
    expect(server.requests).toHaveLength(2);
  });

  it('resets on every attempt end in RetriesExhaustedError(NetworkError)', async () => {
    const { client } = await setup((req) => req.socket.destroy(), { maxAttempts: 2 });
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect((err as RetriesExhaustedError).lastCause).toBeInstanceOf(NetworkError);
    expect(err.message).toContain('after 2 attempts');
  });

  it('truncation on every attempt ends in RetriesExhaustedError(ResponseShapeError truncated)', async () => {
    const { client } = await setup((_q, res) => sendJson(res, 200, '{"meta":{"chain_ids":[1],"page":0'), { maxAttempts: 2 });
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    const cause = (err as RetriesExhaustedError).lastCause as ResponseShapeError;
    expect(cause).toBeInstanceOf(ResponseShapeError);
    expect(cause.problem).toBe('truncated');
    expect(cause.url).toContain('/wallets/');
  });

  const nonRetryable: [number, unknown, string][] = [
    [400, { error: 'invalid filter_block_number' }, 'invalid filter_block_number'],
    [401, { error: 'Unauthorized' }, 'Unauthorized'],
    [403, { code: 403, message: 'Not enabled', support_id: 'abc-123' }, 'Not enabled (code 403)'],
    [404, 'no ABI found', 'no ABI found'],
  ];
  for (const [status, body, message] of nonRetryable) {
    it(`does not retry HTTP ${status} and carries the server message`, async () => {
      const { server, client } = await setup((_q, res) => sendJson(res, status, body));
      const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
      expect(err).toBeInstanceOf(HttpStatusError);
      const e = err as HttpStatusError;
      expect(e.status).toBe(status);
      expect(e.serverMessage).toBe(message);
      expect(e.url).toBe(`${server.url}/insights/v1/wallets/${WALLET}/transactions?chain_id=1`);
      expect(server.requests).toHaveLength(1);
      if (status === 403) expect(e.supportId).toBe('abc-123');
    });
  }

  it('does not retry a well-formed JSON body of the wrong shape', async () => {
    const { server, client } = await setup((_q, res) =>
      sendJson(res, 200, { meta: wireMeta(), data: [{ ...wireTransaction(0), block_number: 'pending' }] }),
    );
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as ResponseShapeError).jsonPath).toBe('$.data[0].block_number');
    expect(server.requests).toHaveLength(1);
  });

  it('maxAttempts 1 sends exactly one request', async () => {
    const { server, client } = await setup((_q, res) => sendJson(res, 500, { error: 'x' }), { maxAttempts: 1 });
    const err = await caught(client.walletTransactions(WALLET, { chainIds: [1] }));
    expect(err).toBeInstanceOf(RetriesExhaustedError);
    expect(err.message).toContain('after 1 attempt');
    expect(server.requests).toHaveLength(1);
  });
});

describe('concurrency', () => {
  it('keeps at most maxInFlight requests in flight and reuses connections', async () => {
    let inFlight = 0;
    let peak = 0;
    const { server, client } = await setup(
      (_q, res) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        setTimeout(() => {
          inFlight--;
          sendJson(res, 200, okBody());
        }, 20);
      },
      { maxInFlight: 3, connections: 8 },
    );
    const sockets = new Set<unknown>();
    server.server.on('connection', (s) => sockets.add(s));
    await Promise.all(Array.from({ length: 12 }, () => client.walletTransactions(WALLET, { chainIds: [1] })));
    expect(peak).toBe(3);
    expect(server.requests).toHaveLength(12);
    // undici may open a fresh connection while a finished one is being handed back to the pool.
    expect(sockets.size).toBeLessThan(12);
  });

  it('requests waiting for a connection do not burn their deadline (maxInFlight defaults to connections)', async () => {
    const { server, client } = await setup((_q, res) => setTimeout(() => sendJson(res, 200, okBody()), 120), {
      connections: 1,
      timeoutMs: 300,
      maxAttempts: 1,
    });
    await Promise.all(Array.from({ length: 4 }, () => client.walletTransactions(WALLET, { chainIds: [1] })));
    expect(server.requests).toHaveLength(4);
    expect(client.stats.failures).toBe(0);
  });

  it('reuses keep-alive connections for sequential requests', async () => {
    const { server, client } = await setup((_q, res) => sendJson(res, 200, okBody()));
    const sockets = new Set<unknown>();
    server.server.on('connection', (s) => sockets.add(s));
    for (let i = 0; i < 20; i++) await client.walletTransactions(WALLET, { chainIds: [1] });
    // undici may open a second connection while the first is handed back; never one per request.
    expect(sockets.size).toBeLessThanOrEqual(2);
  });
});
