/**
 * A dataset's wireColumns let the DuckDB engine take those columns from the page's bytes (see
 * src/source/wire-page.ts): each must be a column whose row value is the record's field of the same
 * name, and none the row computes. Checked on a normalised record of every dataset that declares them.
 */
import { describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/datasets/index.js';
import { transactionsDataset } from '../../src/datasets/transactions.js';
import { normaliseTransaction } from '../../src/source/response-records.js';
import { decodingWalletTarget } from '../sink/fixtures.js';
import { wireTransaction } from '../source/fixtures.js';

const WALLET = '0x3333333333333333333333333333333333333333';

describe('the columns a dataset copies from the wire are its record fields as they are', () => {
  it('transactions: every wire column is the record field of its name; the others are not copies', () => {
    const target = decodingWalletTarget(WALLET);
    const record = normaliseTransaction({ ...wireTransaction(3), contract_address: null }, 'test', '$.data', 0, true);
    const row = transactionsDataset.toRow(record, target);
    const wire = transactionsDataset.wireColumns!;
    const names = transactionsDataset.columns(target).map((c) => c.name);
    for (const c of wire) {
      expect(names, c).toContain(c);
      expect(Object.hasOwn(record, c), c).toBe(true);
      expect(row[c], c).toBe((record as unknown as Record<string, unknown>)[c]);
    }
    // What toRow computes (item_id, block_time, wallet_address, the decoded columns) is never read from the page.
    for (const c of ['item_id', 'block_time', 'wallet_address', 'decoded_function_name', 'decode_status']) expect(wire, c).not.toContain(c);
  });

  it('only datasets whose toRow copies fields declare them', () => {
    const declaring = Object.values(DATASETS)
      .filter((d) => d.wireColumns !== undefined)
      .map((d) => d.name);
    expect(declaring).toEqual(['transactions']);
  });
});
