import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserInputError } from '../../src/errors.js';
import { InsightClient } from '../../src/source/client.js';
import { RequestValidationError } from '../../src/source/errors.js';
import type { ListQuery } from '../../src/source/query.js';
import { CONTRACT, HASH, TRANSFER, WALLET, fakeServer, sendJson, wireMeta, type FakeServer } from './fixtures.js';

let server: FakeServer;
let client: InsightClient;

beforeAll(async () => {
  server = await fakeServer((_req, res) => sendJson(res, 200, { meta: wireMeta(), data: [] }));
  client = new InsightClient({ baseUrl: `${server.url}/insights/v1`, maxAttempts: 1 });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

async function rejects(call: () => Promise<unknown>, parameter: string): Promise<void> {
  const before = server.requests.length;
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a rejection naming ${parameter}`).toBeInstanceOf(RequestValidationError);
  expect(err).toBeInstanceOf(UserInputError);
  expect((err as RequestValidationError).parameter).toBe(parameter);
  expect((err as RequestValidationError).exitCode).toBe(2);
  expect((err as Error).message).toContain(parameter);
  expect(server.requests.length, 'nothing may be sent').toBe(before);
}

const ok: ListQuery = { chainIds: [1] };

describe('list query rules', () => {
  const cases: [string, ListQuery, string][] = [
    ['no chain ids', { chainIds: [] }, 'chainIds'],
    ['56 chain ids', { chainIds: Array.from({ length: 56 }, (_, i) => i + 1) }, 'chainIds'],
    ['zero chain id', { chainIds: [0] }, 'chainIds'],
    ['negative chain id', { chainIds: [-1] }, 'chainIds'],
    ['fractional chain id', { chainIds: [1.5] }, 'chainIds'],
    ['duplicate chain id', { chainIds: [1, 1] }, 'chainIds'],
    ['string chain id', { chainIds: ['1' as unknown as number] }, 'chainIds'],
    ['unknown filter', { ...ok, filters: { filter_from_address: WALLET } }, 'filters.filter_from_address'],
    ['event filter on transactions', { ...ok, filters: { filter_log_index: 1 } }, 'filters.filter_log_index'],
    ['operator on a hash filter', { ...ok, filters: { filter_hash_gte: HASH } }, 'filters.filter_hash_gte'],
    ['unsupported operator', { ...ok, filters: { filter_block_number_ne: 1 } }, 'filters.filter_block_number_ne'],
    ['negative block', { ...ok, filters: { filter_block_number_gte: -1 } }, 'filters.filter_block_number_gte'],
    ['fractional block', { ...ok, filters: { filter_block_number: 1.5 } }, 'filters.filter_block_number'],
    ['unsafe JS number for value', { ...ok, filters: { filter_value_gt: 2 ** 60 } }, 'filters.filter_value_gt'],
    ['non-decimal string', { ...ok, filters: { filter_value: '1e18' } }, 'filters.filter_value'],
    ['value beyond uint256', { ...ok, filters: { filter_gas_price_lt: 2n ** 256n } }, 'filters.filter_gas_price_lt'],
    ['bad hash', { ...ok, filters: { filter_hash: '0x1234' } }, 'filters.filter_hash'],
    ['bad selector', { ...ok, filters: { filter_function_selector: 'transfer' } }, 'filters.filter_function_selector'],
    ['sort by other column', { ...ok, sortBy: 'gas' as 'block_number' }, 'sortBy'],
    ['bad sort order', { ...ok, sortOrder: 'up' as 'asc' }, 'sortOrder'],
    ['limit 0', { ...ok, limit: 0 }, 'limit'],
    ['limit 1001', { ...ok, limit: 1001 }, 'limit'],
    ['page 21', { ...ok, page: 21 }, 'page'],
    ['page -1', { ...ok, page: -1 }, 'page'],
    ['page 501 with aggregate', { ...ok, aggregate: ['count()'], page: 501 }, 'page'],
    ['group_by not a column', { ...ok, groupBy: ['chain_id; drop'] }, 'groupBy'],
    ['empty aggregate', { ...ok, aggregate: [' '] }, 'aggregate'],
    ['decode not a boolean', { ...ok, decode: 'yes' as unknown as boolean }, 'decode'],
  ];
  for (const [what, q, parameter] of cases) {
    it(`rejects ${what}`, async () => {
      await rejects(() => client.walletTransactions(WALLET, q), parameter);
    });
  }

  it('rejects a transactions-only filter on events', async () => {
    await rejects(() => client.contractEvents(CONTRACT, TRANSFER, { ...ok, filters: { filter_value: 1 } }), 'filters.filter_value');
  });
  it('rejects a short topic', async () => {
    await rejects(
      () => client.contractEvents(CONTRACT, TRANSFER, { ...ok, filters: { filter_topic_1: WALLET } }),
      'filters.filter_topic_1',
    );
  });
});

describe('path parameters', () => {
  it('rejects a malformed wallet', async () => {
    await rejects(() => client.walletTransactions('0x1234', ok), 'wallet');
    await rejects(() => client.walletTransactions('not a name', ok), 'wallet');
    await rejects(() => client.walletTransactions('../admin', ok), 'wallet');
  });
  it('rejects a malformed contract', async () => {
    await rejects(() => client.contractEvents('vitalik.eth', TRANSFER, ok), 'contract');
    await rejects(() => client.decode(`${CONTRACT}00`, { transactions: [{ data: '0x' }] }), 'contract');
  });
  const badSignatures: [string, string][] = [
    ['a bare topic hash', '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'],
    ['a function', 'function transfer(address to, uint256 amount)'],
    ['non-canonical uint', 'Transfer(address indexed from, address indexed to, uint value)'],
    ['non-canonical int', 'Moved(int delta)'],
    ['an unknown type', 'Transfer(address indexed from, address indexed to, uint257 value)'],
    ['garbage', 'Transfer(address'],
    ['an empty string', ''],
  ];
  for (const [what, signature] of badSignatures) {
    it(`rejects ${what} as event signature`, async () => {
      await rejects(() => client.contractEvents(CONTRACT, signature, ok), 'signature');
    });
  }
  it('rejects bad resolve inputs', async () => {
    await rejects(() => client.resolve(''), 'input');
    await rejects(() => client.resolve('0x12345'), 'input');
    await rejects(() => client.resolve(' 123'), 'input');
    await rejects(() => client.resolve('1', { chainIds: [0] }), 'chainIds');
  });
  it('rejects bad decode bodies', async () => {
    await rejects(() => client.decode(CONTRACT, {}), 'body');
    await rejects(() => client.decode(CONTRACT, { transactions: [{ data: 'abc' }] }), 'body.transactions[0].data');
    await rejects(() => client.decode(CONTRACT, { logs: [{ topics: ['0x12'], data: '0x' }] }), 'body.logs[0].topics[0]');
    await rejects(() => client.decode(CONTRACT, { logs: [{ topics: [HASH, HASH, HASH, HASH, HASH], data: '0x' }] }), 'body.logs[0].topics');
  });
  it('rejects bad NFT arguments', async () => {
    await rejects(() => client.nftCollectionsPage('0xabc'), 'address');
    await rejects(() => client.nftCollectionsPage(WALLET, { types: ['ERC-20' as 'ERC-721'] }), 'types');
    await rejects(
      () => client.nftCollectionsPage(WALLET, { pageParams: { token_type: { a: 1 } as unknown as string } }),
      'pageParams.token_type',
    );
  });
});

describe('client options', () => {
  it('rejects a base URL carrying credentials or a query string', () => {
    expect(() => new InsightClient({ baseUrl: 'http://user:pw@127.0.0.1:1/v1' })).toThrow(RequestValidationError);
    expect(() => new InsightClient({ baseUrl: 'http://127.0.0.1:1/v1?key=abc' })).toThrow(RequestValidationError);
    expect(() => new InsightClient({ baseUrl: 'ftp://127.0.0.1/v1' })).toThrow(RequestValidationError);
  });
});

it('a valid request does reach the server (the fake is live)', async () => {
  const before = server.requests.length;
  await client.walletTransactions(WALLET, ok);
  expect(server.requests.length).toBe(before + 1);
  expect(server.requests.at(-1)!.url).toBe(`/insights/v1/wallets/${WALLET}/transactions?chain_id=1`);
});
