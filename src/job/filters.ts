/**
 * The `filter_*` query parameters of the read interface, per list operation
 * (the read-interface contract, operations 1 and 2), and how their values are checked.
 * Block number and timestamp filters are not accepted from job files: the planner sets them
 * from `range` for every window.
 */
import {
  EVENT_FILTERS as SOURCE_EVENT_FILTERS,
  TRANSACTION_FILTERS as SOURCE_TRANSACTION_FILTERS,
  type FilterKind as SourceFilterKind,
  type FilterSpec,
} from '../source/query.js';
import { capabilitiesOf, type DatasetName, type TargetKind } from '../datasets/index.js';
import { parseAddress, parseHash32, type Parsed } from '../settings/values.js';

export type FilterKind = 'integer' | 'hash32' | 'selector' | 'topic';

const JOB_KIND: Record<SourceFilterKind, FilterKind> = { uint64: 'integer', uint256: 'integer', hash32: 'hash32', selector: 'selector' };
const WINDOW_FIELDS = new Set(['block_number', 'block_timestamp']);

/** The contract's filters of one operation (from the client's table), as job files may use them. */
function jobFilters(specs: ReadonlyMap<string, FilterSpec>): ReadonlyMap<string, FilterKind> {
  const out = new Map<string, FilterKind>();
  for (const spec of specs.values()) {
    if (WINDOW_FIELDS.has(spec.field)) continue;
    out.set(spec.name, spec.field.startsWith('topic_') ? 'topic' : JOB_KIND[spec.kind]);
  }
  return out;
}

/** Filters the planner owns (set per window from `range`). */
export const RANGE_FILTERS: ReadonlySet<string> = new Set(
  [...SOURCE_TRANSACTION_FILTERS.values()].filter((s) => WINDOW_FIELDS.has(s.field)).map((s) => s.name),
);

/** Filters of GET /wallets/{address}/transactions that a job may set. */
export const JOB_TRANSACTION_FILTERS = jobFilters(SOURCE_TRANSACTION_FILTERS);

/** Filters of GET /events/{contract}/{signature} that a job may set. */
export const JOB_EVENT_FILTERS = jobFilters(SOURCE_EVENT_FILTERS);

/** A list operation of the read interface, named by the target kind it lists for. */
export type ListRoute = 'wallet' | 'contract';

/** The list operation of each target kind: wallet transactions, contract events; a chain target has none. */
const KIND_ROUTES: Record<TargetKind, ListRoute | null> = { wallet: 'wallet', contract: 'contract', chain: null };

const ROUTE_FILTERS: Record<ListRoute, ReadonlyMap<string, FilterKind>> = {
  wallet: JOB_TRANSACTION_FILTERS,
  contract: JOB_EVENT_FILTERS,
};

/** The list operation whose filters a dataset of a target takes; null = no filters. */
export function filterRoute(dataset: DatasetName, targetKind: TargetKind): ListRoute | null {
  return capabilitiesOf(dataset).filters === 'none' ? null : KIND_ROUTES[targetKind];
}

export function filtersOf(route: ListRoute): ReadonlyMap<string, FilterKind> {
  return ROUTE_FILTERS[route];
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
      return {
        ok: false,
        problem: 'is not a whole number >= 0',
        hint: 'write big numbers (wei) as decimal digits, e.g. "1000000000000000000"',
      };
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
      return {
        ok: false,
        problem: 'is not a topic (0x + 64 hex digits) or an address',
        hint: 'an address is left-padded to 32 bytes for you',
      };
    }
  }
}
