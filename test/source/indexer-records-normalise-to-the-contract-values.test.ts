/**
 * The real indexer writes its records from non-Nullable ClickHouse columns: "" (or a FixedString's
 * NUL padding) for a contract creation's to_address and a plain transfer's function_selector, "0"
 * for the EIP-1559 fees of legacy transactions, and fields the contract does not show. They
 * normalise to the values the output columns document (null where there is none).
 */
import { describe, expect, it } from 'vitest';
import { normaliseResolveResponse, normaliseTransaction } from '../../src/source/response-records.js';

const base = {
  chain_id: '1',
  block_number: 100,
  block_hash: `0x${'11'.repeat(32)}`,
  block_timestamp: 1_706_745_600,
  hash: `0x${'22'.repeat(32)}`,
  nonce: 3,
  transaction_index: 0,
  from_address: `0x${'33'.repeat(20)}`,
  to_address: `0x${'44'.repeat(20)}`,
  value: '5',
  gas_price: '7',
  gas: 21000,
  function_selector: '',
  data: '0x',
  max_fee_per_gas: '0',
  max_priority_fee_per_gas: '0',
  max_fee_per_blob_gas: '0',
  transaction_type: 0,
  r: '1',
  s: '2',
  v: '37',
};

const tx = (over: Record<string, unknown>) => normaliseTransaction({ ...base, ...over }, 'http://x', '$.data', 0, true);

describe('indexer records', () => {
  it('"" or NUL padding for a creation\'s to_address and a plain transfer\'s selector is null', () => {
    for (const empty of ['', '\u0000'.repeat(42)]) expect(tx({ to_address: empty }).to_address).toBeNull();
    for (const empty of ['', '\u0000'.repeat(10)]) expect(tx({ function_selector: empty }).function_selector).toBeNull();
    expect(tx({ function_selector: '0xa9059cbb' }).function_selector).toBe('0xa9059cbb');
  });

  it('"0" EIP-1559 fees of legacy and access-list transactions are null; a type-2 zero tip stays "0"', () => {
    for (const type of [0, 1]) {
      const t = tx({ transaction_type: type });
      expect([t.max_fee_per_gas, t.max_priority_fee_per_gas]).toEqual([null, null]);
    }
    const t2 = tx({ transaction_type: 2, max_fee_per_gas: '30', max_priority_fee_per_gas: '0' });
    expect([t2.max_fee_per_gas, t2.max_priority_fee_per_gas]).toEqual(['30', '0']);
  });

  it('extra fields (max_fee_per_blob_gas, blob_versioned_hashes) are accepted and not carried', () => {
    const t = tx({
      transaction_type: 3,
      max_fee_per_gas: '9',
      max_priority_fee_per_gas: '1',
      max_fee_per_blob_gas: '4',
      blob_versioned_hashes: [`0x01${'ab'.repeat(31)}`],
    });
    expect(t.transaction_type).toBe(3);
    expect('max_fee_per_blob_gas' in t).toBe(false);
    expect('blob_versioned_hashes' in t).toBe(false);
  });

  it('resolve of an unknown hash (data {}) is an empty answer of type unknown', () => {
    const r = normaliseResolveResponse({ meta: { chain_id: 1, page: 0 }, data: {} }, 'http://x');
    expect(r.data).toEqual({ type: 'unknown', blocks: [], transactions: [], events: [], address: null });
    expect(r.meta.chain_ids).toEqual([1]);
  });
});
