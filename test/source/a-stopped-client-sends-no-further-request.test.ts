import { afterEach, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { InsightClient } from '../../src/source/client.js';
import { fakeServer, sendJson, wireBlock, wireMeta, type FakeServer } from './fixtures.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it('after the run is stopped, a request ends with InterruptedError and reaches no server', async () => {
  server = await fakeServer((_req, res) => sendJson(res, 200, { meta: wireMeta(), data: { type: 'block', blocks: [wireBlock(0)] } }));
  const client = new InsightClient({ baseUrl: server.url });
  const stop = new AbortController();
  client.stopOn(stop.signal);
  await client.resolve('19000000', { chainIds: [1] });
  expect(server.requests).toHaveLength(1);
  stop.abort('SIGTERM');
  await expect(client.resolve('19000001', { chainIds: [1] })).rejects.toBeInstanceOf(InterruptedError);
  expect(server.requests).toHaveLength(1);
  await client.close();
});

it('a stop during a retry wait ends the wait: the request ends with InterruptedError without its remaining attempts', async () => {
  server = await fakeServer((_req, res) => sendJson(res, 503, { error: 'busy' }));
  const client = new InsightClient({ baseUrl: server.url, maxAttempts: 6, backoff: { baseMs: 60_000, maxMs: 60_000 } });
  const stop = new AbortController();
  client.stopOn(stop.signal);
  const pending = client.resolve('19000000', { chainIds: [1] });
  while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
  stop.abort('SIGTERM');
  await expect(pending).rejects.toBeInstanceOf(InterruptedError);
  expect(server.requests).toHaveLength(1);
  await client.close();
});
