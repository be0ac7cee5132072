import { describe, expect, it } from 'vitest';
import { normaliseListResponse, normaliseNftCollectionsPage, normaliseResolveResponse } from '../../src/source/response-records.js';
import { ResponseShapeError } from '../../src/source/errors.js';
import { wireEvent, wireMeta, wireTransaction } from './fixtures.js';

const URL = 'http://127.0.0.1:1/insights/v1/events/0x/Transfer?chain_id=1';

function problemAt(fn: () => unknown): { path: string; err: ResponseShapeError } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ResponseShapeError);
    const e = err as ResponseShapeError;
    expect(e.url).toBe(URL);
    expect(e.problem).toBe('shape');
    expect(e.message).toContain(URL);
    expect(e.message).toContain(e.jsonPath);
    return { path: e.jsonPath, err: e };
  }
  throw new Error('expected a ResponseShapeError');
}

describe('wrong shapes are typed errors with the JSON path', () => {
  const rows = (bad: Record<string, unknown>, at = 4) =>
    Array.from({ length: 6 }, (_, i) => (i === at ? { ...wireTransaction(i), ...bad } : wireTransaction(i)));

  const cases: [string, unknown, string][] = [
    ['a top-level array', [], '$'],
    ['no meta', { data: [] }, '$.meta'],
    ['data as an object', { meta: wireMeta(), data: {} }, '$.data'],
    ['a row that is not an object', { meta: wireMeta(), data: [wireTransaction(0), 5] }, '$.data[1]'],
    ['block_number as a word', { meta: wireMeta(), data: rows({ block_number: 'latest' }) }, '$.data[4].block_number'],
    ['block_number beyond 2^53', { meta: wireMeta(), data: rows({ block_number: '9007199254740993' }) }, '$.data[4].block_number'],
    ['a negative block_number', { meta: wireMeta(), data: rows({ block_number: -1 }) }, '$.data[4].block_number'],
    [
      'a negative transaction_index as a string',
      { meta: wireMeta(), data: rows({ transaction_index: '-0' }) },
      '$.data[4].transaction_index',
    ],
    [
      'a block_timestamp before 1970',
      { meta: wireMeta(), data: rows({ block_timestamp: '1969-12-31 23:59:59' }) },
      '$.data[4].block_timestamp',
    ],
    ['missing hash', { meta: wireMeta(), data: rows({ hash: undefined }) }, '$.data[4].hash'],
    ['negative value', { meta: wireMeta(), data: rows({ value: '-1' }) }, '$.data[4].value'],
    ['fractional value', { meta: wireMeta(), data: rows({ value: 1.5 }) }, '$.data[4].value'],
    ['chain_id as a word', { meta: wireMeta(), data: rows({ chain_id: 'mainnet' }, 0) }, '$.data[0].chain_id'],
    ['decoded as a string', { meta: wireMeta(), data: rows({ decoded: 'transfer' }, 2) }, '$.data[2].decoded'],
    ['meta.chain_ids as a number', { meta: wireMeta({ chain_ids: 1 }), data: [] }, '$.meta.chain_ids'],
    ['meta.page as a word', { meta: wireMeta({ page: 'first' }), data: [] }, '$.meta.page'],
  ];
  for (const [what, json, path] of cases) {
    it(`reports ${what} at ${path}`, () => {
      expect(problemAt(() => normaliseListResponse(json, URL, 'transactions', false)).path).toBe(path);
    });
  }

  it('reports a bad topic inside an event', () => {
    const ev = { ...wireEvent(0), topics: ['0xdd', 7] };
    expect(problemAt(() => normaliseListResponse({ meta: wireMeta(), data: [ev] }, URL, 'events', false)).path).toBe('$.data[0].topics[1]');
  });

  it('reports deep paths in resolve and NFT pages', () => {
    expect(
      problemAt(() =>
        normaliseResolveResponse(
          { meta: wireMeta(), data: { type: 'address', transactions: [wireTransaction(0), { ...wireTransaction(1), nonce: 'x' }] } },
          URL,
        ),
      ).path,
    ).toBe('$.data.transactions[1].nonce');
    expect(problemAt(() => normaliseResolveResponse({ meta: wireMeta(), data: [] }, URL)).path).toBe('$.data');
    expect(
      problemAt(() =>
        normaliseNftCollectionsPage(
          {
            items: [{ token: { address: '0x01', type: 'ERC-721' }, amount: '1', token_instances: [{ id: '1', owner: { hash: 5 } }] }],
            next_page_params: null,
          },
          URL,
        ),
      ).path,
    ).toBe('$.items[0].token_instances[0].owner.hash');
  });
});
