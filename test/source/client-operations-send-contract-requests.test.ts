import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import { HttpStatusError } from '../../src/source/errors.js';
import {
  CONTRACT,
  HASH,
  TRANSFER,
  WALLET,
  fakeServer,
  sendJson,
  wireBlock,
  wireEvent,
  wireMeta,
  wireTransaction,
  type FakeServer,
} from './fixtures.js';

let server: FakeServer;
let client: InsightClient;

beforeAll(async () => {
  server = await fakeServer((req, res, body) => {
    const path = new URL(req.url!, 'http://x').pathname;
    if (path.startsWith('/v1/events/'))
      return sendJson(res, 200, { meta: wireMeta({ signature: '0xDDF2' }), data: [wireEvent(0), wireEvent(1)] });
    if (path.startsWith('/v1/wallets/') && req.url!.includes('group_by')) {
      return sendJson(res, 200, { meta: wireMeta(), aggregations: [{ block_number: 1, count: 2 }] });
    }
    if (path.startsWith('/v1/resolve/')) return sendJson(res, 200, { meta: wireMeta(), data: { type: 'block', blocks: [wireBlock(0)] } });
    if (path.startsWith('/v1/decode/')) {
      const parsed = JSON.parse(body) as { transactions?: { data: string }[] };
      if (path.endsWith(CONTRACT)) {
        return sendJson(res, 200, {
          data: { transactions: parsed.transactions!.map((t) => ({ ...t, function_name: 'transfer', args: [WALLET, '1'] })), logs: [] },
        });
      }
      return sendJson(res, 404, { error: 'no ABI found for contract' });
    }
    return sendJson(res, 404, { error: 'not found' });
  });
  client = new InsightClient({ baseUrl: `${server.url}/v1/`, maxAttempts: 2, backoff: { baseMs: 1, maxMs: 1 } });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('operations over HTTP', () => {
  it('contract events: GET with the encoded signature, records normalised', async () => {
    const res = await client.contractEvents(CONTRACT, TRANSFER, { chainIds: [1], limit: 2, sortBy: 'block_number', sortOrder: 'asc' });
    const req = server.requests.at(-1)!;
    expect(req.method).toBe('GET');
    expect(req.url).toBe(
      `/v1/events/${CONTRACT}/Transfer(address%20indexed%20from%2C%20address%20indexed%20to%2C%20uint256%20value)?chain_id=1&sort_by=block_number&sort_order=asc&limit=2`,
    );
    expect(res.data.map((e) => e.log_index)).toEqual([0, 1]);
    expect(res.data[0]!.chain_id).toBe(1);
    expect(res.meta.signature).toBe('0xDDF2');
  });

  it('aggregate queries come back as aggregation rows', async () => {
    const res = await client.walletTransactions(WALLET, { chainIds: [1], groupBy: ['block_number'], aggregate: ['count() as count'] });
    expect(res.aggregations).toEqual([{ block_number: 1, count: 2 }]);
    expect(res.data).toEqual([]);
  });

  it('resolve: GET, blocks normalised', async () => {
    const res = await client.resolve('19000000', { chainIds: [1] });
    expect(server.requests.at(-1)!.url).toBe('/v1/resolve/19000000?chain_id=1');
    expect(res.data.blocks[0]!.block_number).toBe(19000000);
  });

  it('decode: POST with a JSON body', async () => {
    const res = await client.decode(CONTRACT, { transactions: [{ data: '0xA9059CBB' }] }, { chainIds: [1] });
    const req = server.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({ transactions: [{ data: '0xa9059cbb' }] });
    expect(res.data.transactions[0]!.function_name).toBe('transfer');
    expect(res.data.logs).toEqual([]);
  });

  it('decode: a 404 (no ABI) is an HttpStatusError, not retried', async () => {
    const before = server.requests.length;
    const other = `0x${'9'.repeat(40)}`;
    const err = await client.decode(other, { logs: [{ topics: [HASH], data: '0x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).status).toBe(404);
    expect((err as HttpStatusError).serverMessage).toBe('no ABI found for contract');
    expect(server.requests.length).toBe(before + 1);
  });

  it('counts bytes received', () => {
    expect(client.stats.bytesReceived).toBeGreaterThan(1000);
    expect(client.stats.requests).toBe(server.requests.length);
  });
});

it('wallet transactions keep decoded when present', async () => {
  const s = await fakeServer((_q, res) =>
    sendJson(res, 200, {
      meta: wireMeta(),
      data: [{ ...wireTransaction(0), decoded: { name: 'transfer', signature: 'transfer(address,uint256)', inputs: { to: WALLET } } }],
    }),
  );
  const c = new InsightClient({ baseUrl: `${s.url}/v1` });
  try {
    const res = await c.walletTransactions(WALLET, { chainIds: [1], decode: true });
    expect(s.requests[0]!.url).toBe(`/v1/wallets/${WALLET}/transactions?chain_id=1&decode=true`);
    expect(res.data[0]!.decoded).toEqual({ name: 'transfer', signature: 'transfer(address,uint256)', inputs: { to: WALLET } });
  } finally {
    await c.close();
    await s.close();
  }
});
