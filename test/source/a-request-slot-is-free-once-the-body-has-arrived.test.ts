import { describe, expect, it } from 'vitest';
import { pbkdf2 } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { InsightClient } from '../../src/source/client.js';
import { fakeServer, wireMeta, wireTransaction } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const { servers, clients } = closeAfterEach();

/** Occupies every thread of libuv's pool (where zlib decodes) for a while. */
function busyThreadPool(): void {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  for (let i = 0; i < threads * 2; i++) pbkdf2('secret', 'salt', 200_000, 64, 'sha512', () => undefined);
}

describe('the client’s request slots', () => {
  it('hold the exchange only: the next request goes out while an answer waits to be decoded', async () => {
    const body = gzipSync(JSON.stringify({ meta: wireMeta(), data: [wireTransaction(0)] }));
    const arrivals: number[] = [];
    const server = await fakeServer((_req, res, _body, n) => {
      arrivals.push(performance.now());
      // The first answer's decoding will wait for the thread pool.
      if (n === 1) busyThreadPool();
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
    });
    servers.push(server);
    const client = new InsightClient({ baseUrl: `${server.url}/insights/v1`, maxInFlight: 1, timeoutMs: 10_000 });
    clients.push(client);

    let firstParsed = 0;
    const first = client.walletTransactions('0x1111111111111111111111111111111111111111', { chainIds: [1] }).then((page) => {
      firstParsed = performance.now();
      return page;
    });
    const second = client.walletTransactions('0x1111111111111111111111111111111111111111', { chainIds: [1] });
    const pages = await Promise.all([first, second]);

    expect(pages.map((p) => p.data.length)).toEqual([1, 1]);
    expect(arrivals).toHaveLength(2);
    // One slot: the second request reached the service before the first answer was decoded.
    expect(arrivals[1]!).toBeLessThan(firstParsed);
  });
});
