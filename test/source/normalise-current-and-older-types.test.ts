import { describe, expect, it } from 'vitest';
import {
  normaliseDecodeResponse,
  normaliseListResponse,
  normaliseNftCollectionsPage,
  normaliseResolveResponse,
} from '../../src/source/response-records.js';
import { ResponseShapeError } from '../../src/source/errors.js';
import { CONTRACT, WALLET, wireBlock, wireEvent, wireMeta, wireTransaction } from './fixtures.js';

const URL = 'http://127.0.0.1:1/insights/v1/wallets/x/transactions?chain_id=1';

function shapeError(fn: () => unknown): ResponseShapeError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ResponseShapeError);
    return err as ResponseShapeError;
  }
  throw new Error('expected a ResponseShapeError');
}

describe('transactions', () => {
  it('normalises the current wire types', () => {
    const raw = wireTransaction(3);
    const res = normaliseListResponse({ meta: wireMeta(), data: [raw], aggregations: null }, URL, 'transactions', false);
    const tx = res.data[0]!;
    expect(tx.chain_id).toBe(1);
    expect(tx.block_number).toBe(raw.block_number);
    expect(tx.value).toBe(raw.value);
    expect(tx.r).toBe(raw.r);
    expect(tx.contract_address).toBeNull(); // '' for "no contract created"
    expect(tx.decoded).toBeNull();
    expect(res.aggregations).toBeNull();
    expect(res.meta).toEqual({ chain_ids: [1], page: 0, limit_per_chain: 20, total_items: 1, total_pages: 0 });
  });

  it('tolerates the older types: block_number/timestamp strings, numeric value, r/s/v, chain_id number', () => {
    const raw = {
      ...wireTransaction(0),
      chain_id: 137,
      block_number: '19000000',
      block_timestamp: '2023-11-14 22:13:20',
      value: 1e21,
      gas_price: 30000000000,
      r: 12345,
      s: '0x1f',
      v: 27,
      hash: '0xABCDEF'.padEnd(66, 'A'),
    };
    const tx = normaliseListResponse({ meta: wireMeta(), data: [raw] }, URL, 'transactions', false).data[0]!;
    expect(tx.chain_id).toBe(137);
    expect(tx.block_number).toBe(19000000);
    expect(tx.block_timestamp).toBe(Date.UTC(2023, 10, 14, 22, 13, 20) / 1000);
    expect(tx.value).toBe('1000000000000000000000');
    expect(tx.gas_price).toBe('30000000000');
    expect(tx.r).toBe('12345');
    expect(tx.s).toBe('31');
    expect(tx.v).toBe('27');
    expect(tx.hash).toBe(raw.hash.toLowerCase());
  });

  it('turns missing optional fields into null', () => {
    const raw = wireTransaction(0);
    for (const key of [
      'to_address',
      'gas_price',
      'max_fee_per_gas',
      'authorization_list_json',
      'gas_used',
      'blob_gas_price',
      'logs_bloom',
      'status',
    ]) {
      delete raw[key];
    }
    const tx = normaliseListResponse({ meta: wireMeta(), data: [raw] }, URL, 'transactions', false).data[0]!;
    expect(tx.to_address).toBeNull();
    expect(tx.gas_price).toBeNull();
    expect(tx.max_fee_per_gas).toBeNull();
    expect(tx.authorization_list_json).toBeNull();
    expect(tx.gas_used).toBeNull();
    expect(tx.blob_gas_price).toBeNull();
    expect(tx.logs_bloom).toBeNull();
    expect(tx.status).toBeNull();
  });

  it('keeps decoded, takes the deprecated decodedData, and maps an empty decoded object to null', () => {
    const decoded = { name: 'transfer', signature: 'transfer(address,uint256)', inputs: { to: CONTRACT, amount: '1000' } };
    const rows = [
      { ...wireTransaction(0), decoded },
      { ...wireTransaction(1), decodedData: decoded },
      { ...wireTransaction(2), decoded: {} },
    ];
    const data = normaliseListResponse({ meta: wireMeta(), data: rows }, URL, 'transactions', false).data;
    expect(data[0]!.decoded).toEqual(decoded);
    expect(data[1]!.decoded).toEqual(decoded);
    expect(data[2]!.decoded).toBeNull();
  });
});

describe('events', () => {
  it('normalises events and the older camelCase decoded keys', () => {
    const raw = {
      ...wireEvent(2),
      chain_id: 8453,
      decoded: {
        name: 'Transfer',
        signature: 'Transfer(address,address,uint256)',
        indexedParams: { from: WALLET },
        nonIndexedParams: { value: '1000' },
      },
    };
    const ev = normaliseListResponse({ meta: wireMeta(), data: [raw] }, URL, 'events', false).data[0]!;
    expect(ev.chain_id).toBe(8453);
    expect(ev.log_index).toBe(2);
    expect(ev.topics).toEqual((raw as Record<string, unknown>).topics);
    expect(ev.decoded).toEqual({
      name: 'Transfer',
      signature: 'Transfer(address,address,uint256)',
      indexed_params: { from: WALLET },
      non_indexed_params: { value: '1000' },
    });
  });

  it('never takes a null or missing data array for an empty page', () => {
    for (const body of [{ meta: wireMeta(), data: null }, { meta: wireMeta() }]) {
      const err = shapeError(() => normaliseListResponse(body, URL, 'events', false));
      expect(err.jsonPath).toBe('$.data');
    }
  });
});

describe('aggregations', () => {
  it('returns the aggregation rows and an empty data array', () => {
    const aggregations = [
      { chain_id: 1, block_number: 5, count: 3, 'sum(value)': '1000000000000000000000' },
      { chain_id: 1, block_number: 6, count: 1, 'sum(value)': '7', extra: [1, 2] },
    ];
    const res = normaliseListResponse({ meta: wireMeta(), aggregations }, URL, 'transactions', true);
    expect(res.data).toEqual([]);
    expect(res.aggregations).toEqual([aggregations[0], { ...aggregations[1], extra: '[1,2]' }]);
  });

  it('fails when an aggregate query gets neither aggregations nor data', () => {
    const err = shapeError(() => normaliseListResponse({ meta: wireMeta(), data: 'x' }, URL, 'transactions', true));
    expect(err.jsonPath).toBe('$.aggregations');
  });
});

describe('meta', () => {
  it('accepts the open-source indexer meta (chain_id, limit) and fills gaps from the request', () => {
    const res = normaliseListResponse({ meta: { chain_id: 10, limit: 5, page: 2 }, data: [] }, URL, 'events', false, {
      chainIds: [10],
      page: 2,
      limit: 5,
    });
    expect(res.meta).toEqual({ chain_ids: [10], page: 2, limit_per_chain: 5, total_items: 0, total_pages: 0 });
    const res2 = normaliseListResponse({ meta: { chain_ids: ['1', '8453'] }, data: [] }, URL, 'events', false, { page: 4, limit: 100 });
    expect(res2.meta).toEqual({ chain_ids: [1, 8453], page: 4, limit_per_chain: 100, total_items: 0, total_pages: 0 });
  });
});

describe('resolve', () => {
  it('normalises blocks (numeric chain_id, string gas of the indexer), transactions and events without decoded', () => {
    const block = { ...wireBlock(0), gas_limit: '30000000', gas_used: '12000000', difficulty: 0 };
    const res = normaliseResolveResponse(
      {
        meta: wireMeta(),
        data: {
          type: 'block',
          blocks: [block],
          transactions: [{ ...wireTransaction(0), decoded: { name: 'x' } }],
          events: null,
          address: null,
        },
      },
      URL,
    );
    expect(res.data.type).toBe('block');
    expect(res.data.blocks[0]!.chain_id).toBe(1);
    expect(res.data.blocks[0]!.gas_limit).toBe(30_000_000);
    expect(res.data.blocks[0]!.gas_used).toBe(12_000_000);
    expect(res.data.blocks[0]!.difficulty).toBe('0');
    expect(res.data.transactions[0]).not.toHaveProperty('decoded');
    expect(res.data.events).toEqual([]);
    expect(res.data.address).toBeNull();
  });
});

describe('decode', () => {
  it('fills missing arrays and names', () => {
    const res = normaliseDecodeResponse(
      { data: { transactions: [{ data: '0xAB', function_name: 'transfer', args: [CONTRACT, '5'] }] } },
      URL,
    );
    expect(res).toEqual({ data: { transactions: [{ data: '0xab', function_name: 'transfer', args: [CONTRACT, '5'] }], logs: [] } });
    const logs = normaliseDecodeResponse({ data: { logs: [{ topics: ['0xAA'], data: '0x' }] } }, URL);
    expect(logs.data.logs[0]).toEqual({ topics: ['0xaa'], data: '0x', event_name: null, args: [] });
  });
});

describe('NFT collections', () => {
  const item = {
    token: {
      address: '0xABCDEFabcdefABCDEFabcdefABCDEFabcdefABCD',
      type: 'ERC-721',
      name: 'Cats',
      symbol: 'CAT',
      holders: 12,
      decimals: null,
    },
    amount: '2',
    token_instances: [
      {
        id: 7,
        is_unique: true,
        owner: { hash: WALLET.toUpperCase().replace('0X', '0x'), is_contract: false, public_tags: [{ label: 'x' }] },
        metadata: { name: 'Cat #7', attributes: [{ trait_type: 'eyes', value: 'green' }] },
      },
    ],
  };
  it('normalises Blockscout items, lowercases addresses, keeps next_page_params', () => {
    const page = normaliseNftCollectionsPage(
      { items: [item], next_page_params: { token_contract_address_hash: CONTRACT, token_type: 'ERC-721', skip: null } },
      URL,
    );
    const got = page.items[0]!;
    expect(got.token.address).toBe(item.token.address.toLowerCase());
    expect(got.token.holders).toBe('12');
    expect(got.token.decimals).toBeNull();
    expect(got.token_instances[0]!.id).toBe('7');
    expect(got.token_instances[0]!.owner!.hash).toBe(WALLET);
    expect(got.token_instances[0]!.owner!.public_tags).toEqual([{ address_hash: null, display_name: null, label: 'x' }]);
    expect(got.token_instances[0]!.owner!.private_tags).toEqual([]);
    expect(got.token_instances[0]!.metadata).toEqual(item.token_instances[0]!.metadata);
    expect(page.next_page_params).toEqual({ token_contract_address_hash: CONTRACT, token_type: 'ERC-721' });
  });
  it('requires next_page_params to be present (null on the last page)', () => {
    expect(normaliseNftCollectionsPage({ items: [], next_page_params: null }, URL).next_page_params).toBeNull();
    expect(shapeError(() => normaliseNftCollectionsPage({ items: [] }, URL)).jsonPath).toBe('$.next_page_params');
  });
});
