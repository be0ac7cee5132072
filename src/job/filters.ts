/**
 * The `filter_*` query parameters of the read interface, per list operation
 * (../shared/reference/read-interface.md, operations 1 and 2), and how their values are checked.
 * Block number and timestamp filters are not accepted from job files: the planner sets them
 * from `range` for every window.
 */
import { parseAddress, parseHash32, type Parsed } from './values.js';

export type FilterKind = 'integer' | 'hash32' | 'selector' | 'topic';

const COMPARE_SUFFIXES = ['', '_gte', '_gt', '_lte', '_lt'] as const;

function compared(column: string, kind: FilterKind): [string, FilterKind][] {
  return COMPARE_SUFFIXES.map((s) => [`filter_${column}${s}`, kind]);
}

/** Filters the planner owns (set per window from `range`). */
export const RANGE_FILTERS = new Set([
  ...compared('block_number', 'integer').map(([n]) => n),
  ...compared('block_timestamp', 'integer').map(([n]) => n),
]);

/** Filters of GET /wallets/{address}/transactions. */
export const TRANSACTION_FILTERS: ReadonlyMap<string, FilterKind> = new Map([
  ['filter_block_hash', 'hash32'],
  ...compared('transaction_index', 'integer'),
  ['filter_hash', 'hash32'],
  ...compared('value', 'integer'),
  ...compared('gas_price', 'integer'),
  ...compared('gas', 'integer'),
  ['filter_function_selector', 'selector'],
]);

/** Filters of GET /events/{contract}/{signature}. */
export const EVENT_FILTERS: ReadonlyMap<string, FilterKind> = new Map([
  ['filter_block_hash', 'hash32'],
  ...compared('transaction_index', 'integer'),
  ['filter_transaction_hash', 'hash32'],
  ...compared('log_index', 'integer'),
  ['filter_topic_1', 'topic'],
  ['filter_topic_2', 'topic'],
  ['filter_topic_3', 'topic'],
]);

/** Which list operation a dataset of a target reads; null = no filters (explorer route). */
export function filterRoute(dataset: string, targetKind: 'wallet' | 'contract'): 'transactions' | 'events' | null {
  if (dataset === 'nft_holdings') return null;
  return targetKind === 'wallet' ? 'transactions' : 'events';
}

export function filtersOf(route: 'transactions' | 'events'): ReadonlyMap<string, FilterKind> {
  return route === 'transactions' ? TRANSACTION_FILTERS : EVENT_FILTERS;
}

/**
 * Normalises a filter value to the exact string sent: integers as decimal strings (uint256
 * columns are compared exactly on the server), hashes lowercase, an address given for a topic
 * left-padded to 32 bytes.
 */
export function parseFilterValue(kind: FilterKind, input: unknown): Parsed<string> {
  switch (kind) {
    case 'integer': {
      if (typeof input === 'number') {
        if (!Number.isSafeInteger(input) || input < 0) return { ok: false, problem: 'is not a whole number >= 0' };
        return { ok: true, value: String(input) };
      }
      if (typeof input === 'string' && /^\d+$/.test(input.trim())) {
        return { ok: true, value: BigInt(input.trim()).toString() };
      }
      return { ok: false, problem: 'is not a whole number >= 0', hint: 'write big numbers (wei) as decimal digits, e.g. "1000000000000000000"' };
    }
    case 'hash32':
      return parseHash32(input);
    case 'selector':
      if (typeof input === 'string' && /^0x[0-9a-fA-F]{8}$/.test(input.trim())) return { ok: true, value: input.trim().toLowerCase() };
      return { ok: false, problem: 'is not a function selector (0x + 8 hex digits)' };
    case 'topic': {
      if (typeof input === 'string' && input.trim().length === 42) {
        const a = parseAddress(input);
        if (a.ok) return { ok: true, value: `0x${a.value.slice(2).padStart(64, '0')}` };
      }
      const h = parseHash32(input);
      if (h.ok) return h;
      return { ok: false, problem: 'is not a topic (0x + 64 hex digits) or an address', hint: 'an address is left-padded to 32 bytes for you' };
    }
  }
}
