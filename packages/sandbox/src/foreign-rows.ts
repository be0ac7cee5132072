import type { EventRecord, TransactionRecord } from '../../../src/shared-with-sandbox.js';
import type { ListResult } from './list-answer.js';
import { hash3, unit } from './prng.js';
import type { Filter, ListQuery } from './query.js';

/** What a foreign row is not: the request's wallet, contract, event or chain. */
export type ForeignKind = 'other_wallet' | 'other_contract' | 'other_event' | 'other_chain';

/** Foreign rows of one answer, by kind. */
export type ForeignCounts = Partial<Record<ForeignKind, number>>;

/** How a route makes a foreign row from one of its own: `hex(n)` draws n bytes, `chainId` is a chain the request did not ask for. */
type MakeForeign<T> = (rec: T, kind: ForeignKind, hex: (bytes: number) => string, chainId: number) => T;

/**
 * A misbehaving server whose filters let other targets' rows through: after some rows (each with
 * probability `rate`, drawn from the request key and the row) comes a row of the same position
 * (so inside every bound the request asked for) that belongs to another wallet, contract, event or
 * chain; then each chain's rows are cut at the limit again, as the service's LIMIT would (the
 * foreign rows take the place of the chain's last rows). Changes `result` in place; returns the
 * foreign rows it holds, by kind.
 */
export function injectForeignRows<T extends TransactionRecord | EventRecord>(
  result: ListResult<T>,
  query: ListQuery,
  rate: number,
  requestKey: number,
  kinds: readonly ForeignKind[],
  make: MakeForeign<T>,
): ForeignCounts {
  const counts: ForeignCounts = {};
  const data = result.data;
  const keys = result.rowKeys;
  if (rate <= 0 || !data || !keys || data.length === 0) return counts;
  const out: T[] = [];
  const outKeys: number[] = [];
  let chain = Number.NaN;
  let inChain = 0;
  /** Adds a row of `chainId`'s part of the answer unless that part is full. */
  const add = (rec: T, key: number, chainId: number): boolean => {
    if (chainId !== chain) [chain, inChain] = [chainId, 0];
    if (query.limit > 0 && inChain >= query.limit) return false;
    out.push(rec);
    outKeys.push(key);
    inChain++;
    return true;
  };
  data.forEach((rec, i) => {
    const key = keys[i]!;
    add(rec, key, rec.chain_id);
    const draw = hash3(requestKey, rec.chain_id, key);
    if (unit(draw) >= rate || !insideFilters(rec, query.filters)) return;
    const kind = kinds[hash3(draw, 0xf0, 1) % kinds.length]!;
    let n = 0;
    const hex = (bytes: number) => {
      let s = '0x';
      while (s.length < 2 + 2 * bytes) s += hash3(draw, 0xf1, n++).toString(16).padStart(8, '0');
      return s.slice(0, 2 + 2 * bytes);
    };
    const foreign = make(rec, kind, hex, otherChain(rec.chain_id, query.chainIds));
    if (add(foreign, key, rec.chain_id)) counts[kind] = (counts[kind] ?? 0) + 1;
  });
  result.data = out;
  result.rowKeys = outKeys;
  result.meta = { ...result.meta, total_items: out.length };
  return counts;
}

/** The next chain id above `chainId` that the request did not ask for. */
function otherChain(chainId: number, asked: number[] | null): number {
  let c = chainId + 1;
  while (asked?.includes(c)) c++;
  return c;
}

/** The record meets every filter of the request on its numeric fields (its position: block, time, index). */
function insideFilters(rec: TransactionRecord | EventRecord, filters: Filter[]): boolean {
  return filters.every((f) => {
    const v = (rec as unknown as Record<string, unknown>)[f.column];
    if (typeof v !== 'number' || typeof f.value !== 'number') return true;
    switch (f.op) {
      case 'eq':
        return v === f.value;
      case 'gte':
        return v >= f.value;
      case 'gt':
        return v > f.value;
      case 'lte':
        return v <= f.value;
      case 'lt':
        return v < f.value;
    }
  });
}

/** Kinds of foreign rows on the wallet route. */
export const FOREIGN_TRANSACTION_KINDS: readonly ForeignKind[] = ['other_wallet', 'other_chain'];
/** Kinds of foreign rows on the events route. */
export const FOREIGN_EVENT_KINDS: readonly ForeignKind[] = ['other_contract', 'other_event', 'other_chain'];

/** A transaction of another wallet (neither sender nor receiver) or of another chain, at `rec`'s position. */
export const foreignTransaction: MakeForeign<TransactionRecord> = (rec, kind, hex, chainId) =>
  kind === 'other_chain'
    ? { ...rec, chain_id: chainId, hash: hex(32) }
    : { ...rec, hash: hex(32), from_address: hex(20), to_address: hex(20) };

/** A log of another contract, of another event or of another chain, at `rec`'s position. */
export const foreignEvent: MakeForeign<EventRecord> = (rec, kind, hex, chainId) => {
  switch (kind) {
    case 'other_chain':
      return { ...rec, chain_id: chainId, transaction_hash: hex(32) };
    case 'other_event':
      return { ...rec, transaction_hash: hex(32), topics: [hex(32), ...rec.topics.slice(1)] };
    default:
      return { ...rec, transaction_hash: hex(32), address: hex(20) };
  }
};
