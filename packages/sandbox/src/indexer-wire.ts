/**
 * How the open-source indexer behind the hosted service writes what the sandbox serves, for the
 * options that reproduce it (see profiles.ts): its resolve inputs, its Go `omitempty` meta and its
 * records as ClickHouse columns (no NULL where the column is not Nullable).
 */
import { keccak256, toHex } from 'viem';
import type { ResponseMeta } from '../../../src/shared-with-sandbox.js';

/** Decimal numbers and 0x hex of 10, 42 or 66 characters: all the indexer's resolve (search) parses. */
export function isIndexerSearchInput(input: string): boolean {
  if (/^\d+$/.test(input)) return true;
  return [10, 42, 66].includes(input.length) && /^0x[0-9a-fA-F]*$/.test(input);
}

/** Meta as Go's omitempty writes it: zero counts dropped, total_pages never set. */
export function omitEmptyMeta(meta: ResponseMeta): Record<string, unknown> {
  const out: Record<string, unknown> = { chain_ids: meta.chain_ids, page: meta.page };
  if (meta.limit_per_chain) out.limit_per_chain = meta.limit_per_chain;
  if (meta.total_items) out.total_items = meta.total_items;
  if (meta.address) out.address = meta.address;
  if (meta.signature) out.signature = meta.signature;
  return out;
}

/**
 * A wire transaction as the indexer's non-Nullable columns give it: "" for a creation's to_address
 * and a plain transfer's function_selector, "0" for the EIP-1559 fees of legacy and access-list
 * transactions, and the blob fields the contract does not show.
 */
export function indexerTransaction(tx: Record<string, unknown>): Record<string, unknown> {
  const type = Number(tx.transaction_type);
  const out: Record<string, unknown> = {
    ...tx,
    to_address: tx.to_address ?? '',
    function_selector: tx.function_selector ?? '',
    max_fee_per_gas: tx.max_fee_per_gas ?? '0',
    max_priority_fee_per_gas: tx.max_priority_fee_per_gas ?? '0',
    max_fee_per_blob_gas: type === 3 ? (BigInt(String(tx.blob_gas_price ?? 0)) * 2n).toString() : '0',
  };
  if (type === 3) out.blob_versioned_hashes = [`0x01${keccak256(toHex(String(tx.hash))).slice(4)}`];
  return out;
}
