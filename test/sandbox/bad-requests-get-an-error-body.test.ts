import { describe, expect, it } from 'vitest';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 2_000, seed: 4 });
const TRANSFER = encodeURIComponent('Transfer(address indexed from, address indexed to, uint256 value)');

describe('bad requests', () => {
  const cases: [string, () => string, number][] = [
    ['limit=0', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?limit=0`, 400],
    ['limit=1001', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?limit=1001`, 400],
    ['limit not a number', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?limit=ten`, 400],
    ['page past 20', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?page=21`, 400],
    ['page past 500 with aggregate', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?aggregate=count()&page=501`, 400],
    [
      '56 chain ids',
      () =>
        `/wallets/${sandbox.data.wallets[0]!.address}/transactions?${Array.from({ length: 56 }, (_, i) => `chain_id=${i + 1}`).join('&')}`,
      400,
    ],
    ['chain id not a number', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?chain_id=eth`, 400],
    ['bad uint256 filter value', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?filter_value_gte=1e18`, 400],
    ['unknown filter column', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?filter_colour=red`, 400],
    ['range op on a hash column', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?filter_hash_gt=0x00`, 400],
    ['unsupported sort_by', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?sort_by=value`, 400],
    ['bad sort_order', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?sort_by=block_number&sort_order=up`, 400],
    ['invalid wallet', () => `/wallets/0x1234/transactions`, 400],
    ['unknown name', () => `/wallets/nobody.eth/transactions`, 400],
    ['bad aggregate', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?aggregate=median(value)`, 400],
    ['bad group_by', () => `/wallets/${sandbox.data.wallets[0]!.address}/transactions?group_by=colour`, 400],
    [
      'bare topic0 as signature',
      () => `/events/${sandbox.data.contracts[0]!.address}/0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef`,
      400,
    ],
    ['unparseable signature', () => `/events/${sandbox.data.contracts[0]!.address}/Transfer(address`, 400],
    [
      'non-canonical uint in signature',
      () =>
        `/events/${sandbox.data.contracts[0]!.address}/${encodeURIComponent('Transfer(address indexed from, address indexed to, uint value)')}`,
      400,
    ],
    ['invalid contract', () => `/events/0xabc/${TRANSFER}`, 400],
    ['unknown route', () => `/wallets/${sandbox.data.wallets[0]!.address}/balances`, 404],
    ['resolve garbage', () => `/resolve/hello-world`, 400],
  ];
  for (const [name, path, status] of cases) {
    it(`${name} -> ${status} {"error"}`, async () => {
      const res = await getJson(sandbox.url + path());
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(typeof res.body.error).toBe('string');
    });
  }

  it('paths outside both prefixes are 404', async () => {
    const origin = new URL(sandbox.url).origin;
    const res = await getJson(`${origin}/v2/wallets/x/transactions`);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/not found/);
  });

  it('page 500 is allowed with group_by', async () => {
    const res = await getJson(`${sandbox.url}/wallets/${sandbox.data.wallets[0]!.address}/transactions?group_by=block_number&page=500`);
    expect(res.status).toBe(200);
    expect(res.body.aggregations).toEqual([]);
  });
});
