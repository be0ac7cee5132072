import { describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import {
  EVENT_FILTERS,
  TRANSACTION_FILTERS,
  contractEventsPath,
  decodePath,
  nftCollectionsPath,
  resolvePath,
  validateEventSignature,
  walletTransactionsPath,
} from '../../src/source/query.js';
import { CONTRACT, HASH, TRANSFER, WALLET } from './fixtures.js';

const ops = ['', '_gte', '_gt', '_lte', '_lt'];
const expand = (field: string) => ops.map((op) => `filter_${field}${op}`);

describe('filter parameter sets match the contract tables', () => {
  it('operation 1 knows exactly the documented filters', () => {
    const expected = [
      ...expand('block_number'),
      'filter_block_hash',
      ...expand('block_timestamp'),
      ...expand('transaction_index'),
      'filter_hash',
      ...expand('value'),
      ...expand('gas_price'),
      ...expand('gas'),
      'filter_function_selector',
    ];
    expect([...TRANSACTION_FILTERS.keys()]).toEqual(expected);
  });

  it('operation 2 knows exactly the documented filters', () => {
    const expected = [
      ...expand('block_number'),
      'filter_block_hash',
      ...expand('block_timestamp'),
      ...expand('transaction_index'),
      'filter_transaction_hash',
      ...expand('log_index'),
      'filter_topic_1',
      'filter_topic_2',
      'filter_topic_3',
    ];
    expect([...EVENT_FILTERS.keys()]).toEqual(expected);
  });
});

describe('wallet transactions path', () => {
  it('sends every numeric filter with every operator as a decimal string', () => {
    for (const field of ['block_number', 'block_timestamp', 'transaction_index', 'gas']) {
      for (const op of ops) {
        const path = walletTransactionsPath(WALLET, { chainIds: [1], filters: { [`filter_${field}${op}`]: 17 } });
        expect(path).toBe(`/wallets/${WALLET}/transactions?chain_id=1&filter_${field}${op}=17`);
      }
    }
  });

  it('sends uint256 filters (value, gas_price) from bigint, string or safe number as exact decimals', () => {
    const big = 2n ** 200n + 1n;
    for (const field of ['value', 'gas_price']) {
      for (const op of ops) {
        const name = `filter_${field}${op}`;
        expect(walletTransactionsPath(WALLET, { chainIds: [1], filters: { [name]: big } })).toBe(
          `/wallets/${WALLET}/transactions?chain_id=1&${name}=1606938044258990275541962092341162602522202993782792835301377`,
        );
        expect(walletTransactionsPath(WALLET, { chainIds: [1], filters: { [name]: '1000000000000000000000' } })).toBe(
          `/wallets/${WALLET}/transactions?chain_id=1&${name}=1000000000000000000000`,
        );
        expect(walletTransactionsPath(WALLET, { chainIds: [1], filters: { [name]: 42 } })).toBe(
          `/wallets/${WALLET}/transactions?chain_id=1&${name}=42`,
        );
      }
    }
  });

  it('sends hash and selector filters lowercased', () => {
    const path = walletTransactionsPath(WALLET, {
      chainIds: [1],
      filters: { filter_hash: HASH.toUpperCase().replace('0X', '0x'), filter_block_hash: HASH, filter_function_selector: '0xA9059CBB' },
    });
    expect(path).toBe(
      `/wallets/${WALLET}/transactions?chain_id=1&filter_block_hash=${HASH}&filter_hash=${HASH}&filter_function_selector=0xa9059cbb`,
    );
  });

  it('puts every part in canonical order whatever the caller order', () => {
    const path = walletTransactionsPath(WALLET.toUpperCase().replace('0X', '0x'), {
      page: 3,
      limit: 1000,
      decode: true,
      sortOrder: 'desc',
      sortBy: 'block_number',
      filters: { filter_block_number_lt: 200, filter_block_number_gte: 100 },
      chainIds: [1, 8453, 137],
    });
    expect(path).toBe(
      `/wallets/${WALLET}/transactions?chain_id=1&chain_id=8453&chain_id=137` +
        '&filter_block_number_gte=100&filter_block_number_lt=200&sort_by=block_number&sort_order=desc&decode=true&limit=1000&page=3',
    );
  });

  it('repeats group_by and aggregate, URL-encoded, and allows pages up to 500 then', () => {
    const path = walletTransactionsPath(WALLET, {
      chainIds: [1],
      groupBy: ['chain_id', 'block_number'],
      aggregate: ['count() as count', 'sum(gas_used) as gas'],
      page: 500,
    });
    expect(path).toBe(
      `/wallets/${WALLET}/transactions?chain_id=1&group_by=chain_id&group_by=block_number` +
        '&aggregate=count()%20as%20count&aggregate=sum(gas_used)%20as%20gas&page=500',
    );
  });

  it('accepts a name for the wallet and encodes it', () => {
    expect(walletTransactionsPath('vitalik.eth', { chainIds: [1] })).toBe('/wallets/vitalik.eth/transactions?chain_id=1');
    expect(walletTransactionsPath('café.eth', { chainIds: [1] })).toBe('/wallets/caf%C3%A9.eth/transactions?chain_id=1');
  });

  it('leaves decode out when false', () => {
    expect(walletTransactionsPath(WALLET, { chainIds: [10], decode: false })).toBe(`/wallets/${WALLET}/transactions?chain_id=10`);
  });

  it('accepts 55 chain ids', () => {
    const ids = Array.from({ length: 55 }, (_, i) => i + 1);
    const path = walletTransactionsPath(WALLET, { chainIds: ids });
    expect(path.match(/chain_id=/g)?.length).toBe(55);
  });
});

describe('contract events path', () => {
  it('sends the canonical human-readable signature, encoded, with every event filter', () => {
    const t1 = `0x000000000000000000000000${WALLET.slice(2)}`;
    const path = contractEventsPath(CONTRACT, TRANSFER, {
      chainIds: [1],
      filters: {
        filter_topic_3: HASH,
        filter_topic_1: t1,
        filter_log_index_lte: 5,
        filter_transaction_hash: HASH,
        filter_topic_2: HASH,
      },
      sortBy: 'block_number',
      sortOrder: 'asc',
    });
    expect(path).toBe(
      `/events/${CONTRACT}/Transfer(address%20indexed%20from%2C%20address%20indexed%20to%2C%20uint256%20value)` +
        `?chain_id=1&filter_transaction_hash=${HASH}&filter_log_index_lte=5&filter_topic_1=${t1}&filter_topic_2=${HASH}&filter_topic_3=${HASH}` +
        '&sort_by=block_number&sort_order=asc',
    );
  });

  it('sends every range filter of operation 2 with every operator', () => {
    for (const field of ['block_number', 'block_timestamp', 'transaction_index', 'log_index']) {
      for (const op of ops) {
        const path = contractEventsPath(CONTRACT, 'Approval(address indexed owner, address indexed spender, uint256 value)', {
          chainIds: [1],
          filters: { [`filter_${field}${op}`]: 9n },
        });
        expect(path.endsWith(`?chain_id=1&filter_${field}${op}=9`)).toBe(true);
      }
    }
  });

  it('accepts the event keyword, normalises spacing, keeps names and indexed, handles tuples', () => {
    const parsed = validateEventSignature('event   Transfer(address indexed from,address indexed to,uint256 value)');
    expect(parsed.human).toBe(TRANSFER);
    expect(parsed.canonical).toBe('Transfer(address,address,uint256)');
    expect(parsed.topic0).toBe(keccak256(toHex('Transfer(address,address,uint256)')));

    const tuple = validateEventSignature('Order((uint256 id, address[] makers) indexed order, bytes32[2] salt)');
    expect(tuple.canonical).toBe('Order((uint256,address[]),bytes32[2])');
    expect(tuple.human).toBe('Order((uint256 id, address[] makers) indexed order, bytes32[2] salt)');
    expect(tuple.topic0).toBe(keccak256(toHex('Order((uint256,address[]),bytes32[2])')));
  });
});

describe('resolve, decode and NFT paths', () => {
  it('resolve sends the input encoded and optional chain ids', () => {
    expect(resolvePath('19000000')).toBe('/resolve/19000000');
    expect(resolvePath(HASH, { chainIds: [1, 10] })).toBe(`/resolve/${HASH}?chain_id=1&chain_id=10`);
    expect(resolvePath('0xA9059CBB')).toBe('/resolve/0xa9059cbb');
    expect(resolvePath('Transfer(address,address,uint256)')).toBe('/resolve/Transfer(address%2Caddress%2Cuint256)');
  });

  it('decode path carries the contract and chain ids', () => {
    expect(decodePath(CONTRACT, { chainIds: [137] })).toBe(`/decode/${CONTRACT}?chain_id=137`);
  });

  it('NFT path sends types comma-separated and every page param back', () => {
    expect(nftCollectionsPath(WALLET)).toBe(`/addresses/${WALLET}/nft/collections`);
    expect(nftCollectionsPath(WALLET, { types: ['ERC-721', 'ERC-1155'] })).toBe(
      `/addresses/${WALLET}/nft/collections?type=ERC-721,ERC-1155`,
    );
    expect(
      nftCollectionsPath(WALLET, {
        types: ['ERC-404'],
        pageParams: { token_contract_address_hash: CONTRACT, token_type: 'ERC-404', items_count: 50 },
      }),
    ).toBe(`/addresses/${WALLET}/nft/collections?type=ERC-404&token_contract_address_hash=${CONTRACT}&token_type=ERC-404&items_count=50`);
  });
});
