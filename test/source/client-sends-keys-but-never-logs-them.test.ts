import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.js';
import { InsightClient, authFromEnv } from '../../src/source/client.js';
import { RetriesExhaustedError } from '../../src/source/errors.js';
import { WALLET, fakeServer, sendJson, wireMeta } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const CLIENT_ID = 'cid-7f3a9c2e51d04b8e';
const SECRET = 'sk-live-Zq81Xw0Pp4Tt6Yy2Uu9Ii3Oo5';

const { servers, clients } = closeAfterEach();

function capture() {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString('utf8');
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', pretty: false, destination }), text: () => text };
}

describe('authentication and secrets', () => {
  it('reads keys from the environment, ignoring empty values', () => {
    expect(authFromEnv({ INSIGHT_CLIENT_ID: CLIENT_ID, INSIGHT_SECRET_KEY: SECRET })).toEqual({ clientId: CLIENT_ID, secretKey: SECRET });
    expect(authFromEnv({ INSIGHT_CLIENT_ID: '  ', INSIGHT_SECRET_KEY: '' })).toEqual({});
  });

  it('sends x-client-id / x-secret-key, and no secret appears in retry logs or errors', async () => {
    const server = await fakeServer((_q, res) => sendJson(res, 503, { error: 'unavailable' }));
    servers.push(server);
    const log = capture();
    const client = new InsightClient({
      baseUrl: `${server.url}/v1`,
      ...authFromEnv({ INSIGHT_CLIENT_ID: CLIENT_ID, INSIGHT_SECRET_KEY: SECRET }),
      maxAttempts: 3,
      backoff: { baseMs: 1, maxMs: 2 },
      logger: log.logger,
    });
    clients.push(client);
    const err = await client.walletTransactions(WALLET, { chainIds: [1] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetriesExhaustedError);

    expect(server.requests).toHaveLength(3);
    for (const r of server.requests) {
      expect(r.headers['x-client-id']).toBe(CLIENT_ID);
      expect(r.headers['x-secret-key']).toBe(SECRET);
      expect(r.url).not.toContain(SECRET);
    }
    const logged = log.text();
    expect(logged.split('\n').filter(Boolean)).toHaveLength(2); // one warn per retry
    expect(logged).toContain('"attempt":1');
    expect(logged).toContain('"status":503');
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain(CLIENT_ID);
    const e = err as RetriesExhaustedError;
    const everything = `${e.message}\n${e.stack}\n${JSON.stringify(e)}\n${String(e.lastCause.message)}`;
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(CLIENT_ID);
  });

  it('sends keys to the explorer only when it is served by the same origin', async () => {
    const page = { items: [], next_page_params: null };
    const api = await fakeServer((_q, res) => sendJson(res, 200, page));
    const other = await fakeServer((_q, res) => sendJson(res, 200, page));
    servers.push(api, other);
    const same = new InsightClient({ baseUrl: `${api.url}/insights/v1`, secretKey: SECRET });
    const elsewhere = new InsightClient({
      baseUrl: `${api.url}/insights/v1`,
      explorerBaseUrl: `${other.url}/explorer/api/v2`,
      secretKey: SECRET,
    });
    clients.push(same, elsewhere);
    await same.nftCollectionsPage(WALLET);
    await elsewhere.nftCollectionsPage(WALLET);
    expect(api.requests[0]!.url).toBe(`/api/v2/addresses/${WALLET}/nft/collections`);
    expect(api.requests[0]!.headers['x-secret-key']).toBe(SECRET);
    expect(other.requests[0]!.url).toBe(`/explorer/api/v2/addresses/${WALLET}/nft/collections`);
    expect(other.requests[0]!.headers['x-secret-key']).toBeUndefined();
  });

  it('sends no auth headers when no keys are configured', async () => {
    const server = await fakeServer((_q, res) => sendJson(res, 200, { meta: wireMeta(), data: [] }));
    servers.push(server);
    const client = new InsightClient({ baseUrl: `${server.url}/v1` });
    clients.push(client);
    await client.walletTransactions(WALLET, { chainIds: [1] });
    expect(server.requests[0]!.headers['x-secret-key']).toBeUndefined();
    expect(server.requests[0]!.headers['x-client-id']).toBeUndefined();
  });
});
