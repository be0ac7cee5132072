import type { BlockRecord, EventRecord, ResolveData, ResponseMeta, TransactionRecord } from '../../../src/shared-with-sandbox.js';
import { badRequest } from './errors.js';
import { ADDRESS_RE, HASH_RE, SELECTOR_RE } from './request-inputs.js';

/** Rows resolve/<input> returns at most per chain (and in all, for a contract's transactions). */
export const RESOLVE_LIMIT = 20;

/** What a data source looks up for resolve/<input>, over the chains the request names (`C`: one chain). */
export interface ResolveLookups<C> {
  block(chain: C, blockNumber: number): BlockRecord | null;
  /** A transaction by hash and the logs it wrote. */
  transaction(chain: C, hash: string): { transaction: TransactionRecord; events: EventRecord[] } | null;
  blockOfHash(chain: C, hash: string): BlockRecord | null;
  /** The newest events with this topic0; null when the hash is no event signature. */
  eventSignature(chains: C[], hash: string): EventRecord[] | null;
  /** The newest transactions with this contract (RESOLVE_LIMIT, newest first); null when the address is no contract. */
  contractTransactions(chains: C[], address: string): TransactionRecord[] | null;
  /** The newest transactions calling this 4-byte selector. */
  functionSelector(chains: C[], selector: string): TransactionRecord[];
  /** The address of a known name (`alice.eth`); absent when the source has no names. */
  nameAddress?(name: string): string | undefined;
  /** The 400's details when the input is none of the kinds. */
  expected: string;
}

/**
 * The answer of resolve/<input>: a block number, a 0x hash (transaction, then block, then event
 * signature), an address (contract or not), a 4-byte function selector, or a known name.
 */
export function resolveAnswer<C>(
  input: string,
  chains: C[],
  metaChainIds: number[],
  lookups: ResolveLookups<C>,
): { meta: ResponseMeta; data: ResolveData } {
  const data: ResolveData = { type: 'unknown', blocks: [], transactions: [], events: [], address: null };
  const text = input.trim();
  if (/^\d+$/.test(text)) {
    const bn = Number(text);
    for (const c of chains) {
      const b = lookups.block(c, bn);
      if (b) data.blocks.push(b);
    }
    data.type = 'block';
  } else if (HASH_RE.test(text)) {
    const hash = text.toLowerCase();
    for (const c of chains) {
      const t = lookups.transaction(c, hash);
      if (t) {
        data.type = 'transaction';
        data.transactions.push(t.transaction);
        data.events.push(...t.events);
      }
    }
    if (data.type === 'unknown') {
      for (const c of chains) {
        const b = lookups.blockOfHash(c, hash);
        if (b) {
          data.type = 'block';
          data.blocks.push(b);
        }
      }
    }
    if (data.type === 'unknown') {
      const events = lookups.eventSignature(chains, hash);
      if (events) {
        data.type = 'event_signature';
        data.events = events;
      }
    }
  } else if (ADDRESS_RE.test(text)) {
    const address = text.toLowerCase();
    data.address = address;
    const txs = lookups.contractTransactions(chains, address);
    data.type = txs ? 'contract' : 'address';
    if (txs) data.transactions = txs;
  } else if (SELECTOR_RE.test(text)) {
    data.type = 'function_signature';
    data.transactions = lookups.functionSelector(chains, text.toLowerCase());
  } else {
    const named = lookups.nameAddress?.(text);
    if (named === undefined) throw badRequest(`cannot resolve input: ${input}`, lookups.expected);
    data.type = 'address';
    data.address = named;
  }
  const items = data.blocks.length + data.transactions.length + data.events.length + (data.address ? 1 : 0);
  return {
    meta: { chain_ids: metaChainIds, page: 0, limit_per_chain: 0, total_items: items, total_pages: 0 },
    data,
  };
}

/**
 * A contract's newest transactions for resolve: the last RESOLVE_LIMIT rows of each chain (rows in
 * chain order), newest first by block timestamp, RESOLVE_LIMIT in all.
 */
export function newestRows<C>(
  chains: C[],
  rowsOf: (chain: C) => ArrayLike<number>,
  timestampOf: (chain: C, row: number) => number,
): { chain: C; row: number }[] {
  const found: { chain: C; row: number }[] = [];
  for (const chain of chains) {
    const rows = rowsOf(chain);
    for (let k = rows.length - 1; k >= 0 && k >= rows.length - RESOLVE_LIMIT; k--) found.push({ chain, row: rows[k]! });
  }
  found.sort((a, b) => timestampOf(b.chain, b.row) - timestampOf(a.chain, a.row));
  return found.slice(0, RESOLVE_LIMIT);
}
