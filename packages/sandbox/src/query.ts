import { isoDate } from '../../../src/shared-with-sandbox.js';
import { MAX_CHAIN_IDS, MAX_LIMIT, MAX_PAGE, MAX_PAGE_AGGREGATED } from '../../../src/shared-with-sandbox.js';
import { hash3 } from './prng.js';
import { badRequest, sqlError } from './errors.js';
import { repeatEarlierRows, shuffleTies, shuffled } from './request-order.js';

/**
 * Query model of the list operations (wallet transactions, contract events) and the engine that
 * evaluates it over the sandbox's columnar rows. The HTTP routes and the tests use the same code.
 */

/** How a column compares: JS number, uint256 (BigInt from a decimal string) or string equality. */
export type ColumnKind = 'num' | 'big' | 'str';
export type CellValue = number | bigint | string | null;

export interface ColumnSpec<S> {
  kind: ColumnKind;
  /** Wire type in aggregation rows: chain_id is a string in transactions/events, uint256 a decimal string. */
  wire: 'number' | 'string';
  /** Non-decreasing along a chain's row order: filters on it narrow by binary search. */
  monotonic?: boolean;
  get(state: S, row: number): CellValue;
}
export type ColumnCatalog<S> = Record<string, ColumnSpec<S>>;

export type FilterOp = 'eq' | 'gte' | 'gt' | 'lte' | 'lt';
export interface Filter {
  column: string;
  op: FilterOp;
  /** Parsed comparison value: number for num, bigint for big, lowercase string for str. */
  value: number | bigint | string;
}

export type GroupBucket = 'none' | 'date' | 'startOfDay';
export interface GroupExpr {
  /** Key in the aggregation row: the alias, or the raw expression. */
  key: string;
  column: string;
  bucket: GroupBucket;
}
export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';
export interface AggregateExpr {
  key: string;
  fn: AggregateFn;
  /** null for count() / count(*). */
  column: string | null;
}

export interface ListQuery {
  /** Requested chains in request order (deduplicated); null = all chains of the sandbox. */
  chainIds: number[] | null;
  filters: Filter[];
  sortBy: string | null;
  sortOrder: 'asc' | 'desc';
  limit: number;
  page: number;
  groupBy: GroupExpr[];
  aggregates: AggregateExpr[];
  decode: boolean;
}

// The service's limits are the read interface's, defined once beside the client's requests.
export { MAX_CHAIN_IDS, MAX_LIMIT, MAX_PAGE, MAX_PAGE_AGGREGATED as MAX_PAGE_AGGREGATE };
export const DEFAULT_LIMIT = 20;

/** How `limit` and `page` are read: the contract's defaults and caps, or the indexer's. */
export interface PagingRules {
  defaultLimit: number;
  /** null: no cap. */
  maxLimit: number | null;
  maxPage: number | null;
  maxPageAggregate: number | null;
  /**
   * The indexer's reading: any integer; limit 0 is the default, a negative limit drops the LIMIT
   * clause and a negative page the OFFSET (its query builder tests `limit > 0`, `page >= 0`).
   */
  signed: boolean;
}

export const CONTRACT_PAGING: PagingRules = {
  defaultLimit: DEFAULT_LIMIT,
  maxLimit: MAX_LIMIT,
  maxPage: MAX_PAGE,
  maxPageAggregate: MAX_PAGE_AGGREGATED,
  signed: false,
};
export const INDEXER_PAGING: PagingRules = { defaultLimit: 5, maxLimit: null, maxPage: null, maxPageAggregate: null, signed: true };

/**
 * Rows [skip, end) of an ordered result under `LIMIT width OFFSET page*limit` (width defaults to
 * limit); without a positive limit there is no LIMIT clause, without a non-negative page no OFFSET.
 */
export function pageBounds(limit: number, page: number, width = limit): { skip: number; end: number } {
  const skip = page >= 0 && limit > 0 ? page * limit : 0;
  return { skip, end: limit > 0 ? skip + width : Infinity };
}

const OP_SUFFIXES: [string, FilterOp][] = [
  ['_gte', 'gte'],
  ['_gt', 'gt'],
  ['_lte', 'lte'],
  ['_lt', 'lt'],
];

function parseInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw)) throw badRequest(`invalid ${name}: ${raw}`, `${name} must be an integer in ${min}..${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw badRequest(`invalid ${name}: ${raw}`, `${name} must be an integer in ${min}..${max}`);
  return n;
}

export function parseChainIds(params: URLSearchParams): number[] | null {
  const raw = [...params.getAll('chain_id'), ...params.getAll('chain')].flatMap((v) => v.split(',')).filter((v) => v !== '');
  if (raw.length === 0) return null;
  const ids: number[] = [];
  for (const v of raw) {
    if (!/^\d+$/.test(v) || Number(v) <= 0 || !Number.isSafeInteger(Number(v))) throw badRequest(`invalid chain_id: ${v}`);
    const id = Number(v);
    if (!ids.includes(id)) ids.push(id);
  }
  if (ids.length > MAX_CHAIN_IDS) throw badRequest(`too many chain ids: ${ids.length} (at most ${MAX_CHAIN_IDS})`);
  return ids;
}

function parseFilterValue(column: string, kind: ColumnKind, op: FilterOp, raw: string): number | bigint | string {
  const v = raw.trim();
  if (kind === 'str') {
    if (op !== 'eq') throw badRequest(`filter on ${column} supports only equality`);
    return v.toLowerCase();
  }
  if (kind === 'num') {
    if (!/^-?\d+$/.test(v) && !/^0x[0-9a-fA-F]+$/.test(v)) throw badRequest(`invalid value for filter_${column}: ${raw}`);
    return Number(v);
  }
  if (/^\d+$/.test(v) || /^0x[0-9a-fA-F]+$/.test(v)) return BigInt(v);
  throw badRequest(`invalid value for filter_${column}: ${raw}`, 'uint256 filters take a decimal integer string');
}

const GROUP_RE = /^(.*?)(?:\s+as\s+([A-Za-z_][A-Za-z0-9_]*))?\s*$/i;
const AGG_RE = /^\s*(count|sum|avg|min|max)\s*\(\s*([A-Za-z0-9_*]*)\s*\)\s*$/i;

function splitAlias(expr: string): { body: string; alias: string | undefined } {
  const m = GROUP_RE.exec(expr.trim());
  return { body: (m?.[1] ?? expr).trim(), alias: m?.[2] };
}

function parseGroupBy(expr: string, catalog: ColumnCatalog<unknown>): GroupExpr {
  const { body, alias } = splitAlias(expr);
  const compact = body.replace(/\s+/g, '');
  let column = compact;
  let bucket: GroupBucket = 'none';
  let m: RegExpExecArray | null;
  if ((m = /^toDate\((?:toDateTime\()?(\w+)\)?\)$/.exec(compact))) {
    column = m[1]!;
    bucket = 'date';
  } else if ((m = /^toStartOfDay\((?:toDateTime\()?(\w+)\)?\)$/.exec(compact))) {
    column = m[1]!;
    bucket = 'startOfDay';
  }
  const spec = catalog[column];
  if (!spec) throw badRequest(`invalid group_by: ${expr}`, `unknown column ${column}`);
  if (bucket !== 'none' && column !== 'block_timestamp')
    throw badRequest(`invalid group_by: ${expr}`, 'day bucketing works on block_timestamp');
  return { key: alias ?? body, column, bucket };
}

function parseAggregate(expr: string, catalog: ColumnCatalog<unknown>): AggregateExpr {
  const { body, alias } = splitAlias(expr);
  const m = AGG_RE.exec(body);
  if (!m) throw sqlError(`invalid aggregate: ${expr}`, 'supported: count(), sum(col), avg(col), min(col), max(col), optional "as alias"');
  const fn = m[1]!.toLowerCase() as AggregateFn;
  const arg = m[2]!;
  const column: string | null = arg === '' || arg === '*' ? null : arg;
  if (column !== null && !catalog[column]) throw sqlError(`invalid aggregate: ${expr}`, `unknown column ${column}`);
  if (fn !== 'count' && column === null) throw sqlError(`invalid aggregate: ${expr}`, `${fn}() needs a column`);
  if ((fn === 'sum' || fn === 'avg') && column !== null && catalog[column]!.kind === 'str') {
    throw sqlError(`invalid aggregate: ${expr}`, `${fn} needs a numeric column`);
  }
  return { key: alias ?? body, fn, column };
}

function parseSigned(name: string, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw badRequest(`invalid ${name}: ${raw}`, `${name} must be an integer`);
  return Number(raw);
}

/** Parse the query string of a list operation against the dataset's column catalog. */
export function parseListQuery<S>(params: URLSearchParams, catalog: ColumnCatalog<S>, rules: PagingRules = CONTRACT_PAGING): ListQuery {
  const chainIds = parseChainIds(params);
  const filters: Filter[] = [];
  for (const [key, raw] of params) {
    if (!key.startsWith('filter_')) continue;
    if (raw === '') continue;
    const rest = key.slice('filter_'.length);
    let column = rest;
    let op: FilterOp = 'eq';
    if (!catalog[rest]) {
      for (const [suffix, o] of OP_SUFFIXES) {
        if (rest.endsWith(suffix) && catalog[rest.slice(0, -suffix.length)]) {
          column = rest.slice(0, -suffix.length);
          op = o;
          break;
        }
      }
    }
    const spec = catalog[column];
    if (!spec) throw sqlError(`unknown filter: ${key}`);
    filters.push({ column, op, value: parseFilterValue(column, spec.kind, op, raw) });
  }
  const sortByRaw = params.get('sort_by') ?? '';
  let sortBy: string | null = null;
  if (sortByRaw !== '') {
    if (sortByRaw !== 'block_number' && sortByRaw !== 'block_timestamp')
      throw badRequest(`invalid sort_by: ${sortByRaw}`, 'allowed: block_number');
    sortBy = sortByRaw;
  }
  const sortOrderRaw = (params.get('sort_order') ?? '').toLowerCase();
  if (sortOrderRaw !== '' && sortOrderRaw !== 'asc' && sortOrderRaw !== 'desc') throw badRequest(`invalid sort_order: ${sortOrderRaw}`);
  const sortOrder = sortOrderRaw === 'desc' ? 'desc' : 'asc';
  const groupBy = params
    .getAll('group_by')
    .filter((g) => g.trim() !== '')
    .map((g) => parseGroupBy(g, catalog as ColumnCatalog<unknown>));
  const aggregates = params
    .getAll('aggregate')
    .filter((a) => a.trim() !== '')
    .map((a) => parseAggregate(a, catalog as ColumnCatalog<unknown>));
  const limitRaw = params.get('limit');
  const pageRaw = params.get('page');
  const aggregated = groupBy.length > 0 || aggregates.length > 0;
  let limit = rules.defaultLimit;
  let page = 0;
  if (rules.signed) {
    if (limitRaw !== null && limitRaw !== '') limit = parseSigned('limit', limitRaw) || rules.defaultLimit;
    if (pageRaw !== null && pageRaw !== '') page = parseSigned('page', pageRaw);
  } else {
    if (limitRaw !== null && limitRaw !== '') limit = parseInteger('limit', limitRaw, 1, rules.maxLimit ?? Number.MAX_SAFE_INTEGER);
    const maxPage = aggregated ? rules.maxPageAggregate : rules.maxPage;
    if (pageRaw !== null && pageRaw !== '') {
      if (!/^\d+$/.test(pageRaw)) throw badRequest(`invalid page: ${pageRaw}`);
      page = Number(pageRaw);
      if (maxPage !== null && page > maxPage)
        throw badRequest(`page ${page} is past the maximum page ${maxPage}`, 'narrow the range (filters) instead of paging further');
    }
  }
  const decodeRaw = (params.get('decode') ?? '').toLowerCase();
  if (!['', 'true', 'false', '1', '0'].includes(decodeRaw)) throw badRequest(`invalid decode: ${decodeRaw}`);
  const decode = decodeRaw === 'true' || decodeRaw === '1';
  return { chainIds, filters, sortBy, sortOrder, limit, page, groupBy, aggregates, decode };
}

/** Query defaults, for building a ListQuery in code (tests, ground truth). */
export function listQuery(q: Partial<ListQuery> = {}): ListQuery {
  return {
    chainIds: null,
    filters: [],
    sortBy: null,
    sortOrder: 'asc',
    limit: DEFAULT_LIMIT,
    page: 0,
    groupBy: [],
    aggregates: [],
    decode: false,
    ...q,
  };
}

// ---------------------------------------------------------------- engine

/** One chain's candidate rows, in ascending (block_number, transaction_index, log_index) order. */
export interface ChainSource<S> {
  chainId: number;
  state: S;
  rows: ArrayLike<number>;
  /** Rows the source returns twice (the UNION ALL self-transfer duplicate). */
  duplicate?: ((row: number) => boolean) | undefined;
  /** Wallet sources: whether the wallet is the row's sender / recipient (the halves of the indexer's UNION ALL). */
  side?: { from: (row: number) => boolean; to: (row: number) => boolean } | undefined;
}

/** What varies per request: set by the server for each list request. */
export interface EngineOptions {
  /** Identifies the request (the server's request counter mixed with its seed). */
  requestKey?: number | undefined;
  /** Rows with equal sort keys in an order that changes per request; without sort_by, no order at all. */
  unstableOrder?: boolean | undefined;
  /** Rate (0..1) of pages served from an earlier offset, repeating rows of earlier blocks. */
  repeatEarlierRows?: number | undefined;
}

export interface SelectedRow<S> {
  chainId: number;
  state: S;
  row: number;
}

function compareCell(a: CellValue, b: number | bigint | string): number {
  if (a === null) return NaN;
  if (typeof a === 'string') return a.toLowerCase() === b ? 0 : NaN;
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a - (b as number);
}

function matchOp(cmp: number, op: FilterOp): boolean {
  if (Number.isNaN(cmp)) return false;
  switch (op) {
    case 'eq':
      return cmp === 0;
    case 'gte':
      return cmp >= 0;
    case 'gt':
      return cmp > 0;
    case 'lte':
      return cmp <= 0;
    case 'lt':
      return cmp < 0;
  }
}

/** First position in [lo, hi) whose key is >= (strict=false) or > (strict=true) v. */
function lowerBound(get: (pos: number) => number, lo: number, hi: number, v: number, strict: boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = get(mid);
    if (strict ? k <= v : k < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** [lo, hi) positions of `source.rows` left after the filters on monotonic columns; the rest are returned. */
function narrow<S>(source: ChainSource<S>, filters: Filter[], catalog: ColumnCatalog<S>): { lo: number; hi: number; residual: Filter[] } {
  let lo = 0;
  let hi = source.rows.length;
  const residual: Filter[] = [];
  for (const f of filters) {
    const spec = catalog[f.column]!;
    if (!spec.monotonic || spec.kind !== 'num') {
      residual.push(f);
      continue;
    }
    const get = (pos: number) => spec.get(source.state, source.rows[pos]!) as number;
    const v = f.value as number;
    switch (f.op) {
      case 'eq':
        lo = lowerBound(get, lo, hi, v, false);
        hi = lowerBound(get, lo, hi, v, true);
        break;
      case 'gte':
        lo = lowerBound(get, lo, hi, v, false);
        break;
      case 'gt':
        lo = lowerBound(get, lo, hi, v, true);
        break;
      case 'lte':
        hi = lowerBound(get, lo, hi, v, true);
        break;
      case 'lt':
        hi = lowerBound(get, lo, hi, v, false);
        break;
    }
  }
  return { lo, hi, residual };
}

function predicate<S>(filters: Filter[], catalog: ColumnCatalog<S>): ((state: S, row: number) => boolean) | null {
  if (filters.length === 0) return null;
  const checks = filters.map((f) => {
    const spec = catalog[f.column]!;
    return (state: S, row: number) => matchOp(compareCell(spec.get(state, row), f.value), f.op);
  });
  return (state, row) => checks.every((c) => c(state, row));
}

/** Walks every matching row of a source in the query's order; stop by returning false. */
function walk<S>(source: ChainSource<S>, query: ListQuery, catalog: ColumnCatalog<S>, visit: (row: number) => boolean): void {
  const { lo, hi, residual } = narrow(source, query.filters, catalog);
  const pred = predicate(residual, catalog);
  const desc = query.sortBy !== null && query.sortOrder === 'desc';
  const n = hi - lo;
  for (let k = 0; k < n; k++) {
    const row = source.rows[desc ? hi - 1 - k : lo + k]!;
    if (pred && !pred(source.state, row)) continue;
    if (!visit(row)) return;
    if (source.duplicate?.(row) && !visit(row)) return;
  }
}

/**
 * The first `need` matching rows of a source in the order one request sees them. With
 * `unstableOrder` rows tied on the sort key are shuffled per request (the whole tie group at the
 * cut is read, so the cut falls where a fresh query would put it), and without sort_by every row.
 */
export function orderedRows<S>(
  source: ChainSource<S>,
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  need: number,
  engine: EngineOptions = {},
): number[] {
  const out: number[] = [];
  if (need <= 0) return out;
  if (!engine.unstableOrder) {
    walk(source, query, catalog, (row) => out.push(row) < need);
    return out;
  }
  const rank = (row: number) => hash3(engine.requestKey ?? 0, source.chainId, row);
  if (query.sortBy === null) {
    walk(source, query, catalog, (row) => {
      out.push(row);
      return true;
    });
    return shuffled(out, rank);
  }
  const spec = catalog[query.sortBy]!;
  const keyOf = (row: number) => spec.get(source.state, row);
  let cut: CellValue | undefined;
  walk(source, query, catalog, (row) => {
    if (out.length >= need) {
      if (cut === undefined) cut = keyOf(out[need - 1]!);
      if (keyOf(row) !== cut) return false;
    }
    out.push(row);
    return true;
  });
  return shuffleTies(out, keyOf, rank);
}

/**
 * Rows of one page: for each requested chain (in order), rows [page*limit, (page+1)*limit) of that
 * chain's filtered, sorted rows (`limit` applies per chain), in the request's order (`engine`),
 * some pages served early with `repeatEarlierRows`.
 */
export function selectPage<S>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  engine: EngineOptions = {},
): SelectedRow<S>[] {
  const out: SelectedRow<S>[] = [];
  const { skip, end } = pageBounds(query.limit, query.page);
  const plain = !engine.unstableOrder && !engine.repeatEarlierRows;
  for (const source of sources) {
    const { lo, hi, residual } = narrow(source, query.filters, catalog);
    const desc = query.sortBy !== null && query.sortOrder === 'desc';
    if (plain && residual.length === 0 && !source.duplicate) {
      for (let k = skip; k < Math.min(end, hi - lo); k++) {
        out.push({ chainId: source.chainId, state: source.state, row: source.rows[desc ? hi - 1 - k : lo + k]! });
      }
      continue;
    }
    const rows = orderedRows(source, query, catalog, end, engine);
    const blockOf = (row: number) => catalog.block_number!.get(source.state, row);
    const page =
      repeatEarlierRows(rows, skip, end, blockOf, engine.repeatEarlierRows ?? 0, hash3(engine.requestKey ?? 0, source.chainId, 0x4e9)) ??
      rows.slice(skip, end);
    for (const row of page) out.push({ chainId: source.chainId, state: source.state, row });
  }
  return out;
}

/** Every matching row of every source (ground truth for tests; aggregation input). */
export function selectAll<S>(sources: ChainSource<S>[], query: ListQuery, catalog: ColumnCatalog<S>): SelectedRow<S>[] {
  const out: SelectedRow<S>[] = [];
  for (const source of sources) {
    walk(source, { ...query, sortBy: null }, catalog, (row) => {
      out.push({ chainId: source.chainId, state: source.state, row });
      return true;
    });
  }
  return out;
}

export type AggregationValue = string | number | boolean | null;

function groupValue<S>(spec: ColumnSpec<S>, g: GroupExpr, state: S, row: number): AggregationValue {
  const v = spec.get(state, row);
  if (v === null) return null;
  if (g.bucket === 'date') return isoDate(Number(v));
  if (g.bucket === 'startOfDay') return `${isoDate(Number(v))} 00:00:00`;
  if (typeof v === 'bigint') return v.toString();
  if (spec.wire === 'string') return String(v);
  return v;
}

function compareGroupValues(a: AggregationValue, b: AggregationValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  if (/^\d+$/.test(sa) && /^\d+$/.test(sb) && sa.length !== sb.length) return sa.length - sb.length;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

interface Accumulator {
  count: number;
  sum: bigint | number;
  min: CellValue;
  max: CellValue;
}

function less(a: CellValue, b: CellValue): boolean {
  if (a === null || b === null) return false;
  if (typeof a === 'string' && typeof b === 'string') return a < b;
  return BigInt(a) < BigInt(b);
}

/**
 * group_by / aggregate: one row per distinct group key (all matching rows of all requested chains),
 * ordered by the group keys (with `unstableOrder` and no sort_by: in no order), then paged with
 * limit/page over those rows.
 */
export function aggregate<S>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  engine: EngineOptions = {},
): Record<string, AggregationValue>[] {
  const groups = new Map<string, { keys: AggregationValue[]; accs: Accumulator[] }>();
  const groupSpecs = query.groupBy.map((g) => catalog[g.column]!);
  const aggSpecs = query.aggregates.map((a) => (a.column === null ? null : catalog[a.column]!));
  for (const source of sources) {
    walk(source, { ...query, sortBy: null }, catalog, (row) => {
      const keys = query.groupBy.map((g, i) => groupValue(groupSpecs[i]!, g, source.state, row));
      const id = JSON.stringify(keys);
      let group = groups.get(id);
      if (!group) {
        group = { keys, accs: query.aggregates.map(() => ({ count: 0, sum: 0, min: null, max: null })) };
        groups.set(id, group);
      }
      query.aggregates.forEach((a, i) => {
        const acc = group!.accs[i]!;
        const spec = aggSpecs[i];
        if (!spec) {
          acc.count++;
          return;
        }
        const v = spec.get(source.state, row);
        if (v === null) return;
        acc.count++;
        if (a.fn === 'sum' || a.fn === 'avg') {
          if (spec.kind === 'big' || typeof acc.sum === 'bigint') acc.sum = BigInt(acc.sum) + BigInt(v);
          else acc.sum = (acc.sum as number) + (v as number);
        } else if (a.fn === 'min') {
          if (acc.min === null || less(v, acc.min)) acc.min = v;
        } else if (a.fn === 'max') {
          if (acc.max === null || less(acc.max, v)) acc.max = v;
        }
      });
      return true;
    });
  }
  const sorted = [...groups.values()].sort((x, y) => {
    for (let i = 0; i < x.keys.length; i++) {
      const c = compareGroupValues(x.keys[i]!, y.keys[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  const rows = sorted.map((g) => {
    const out: Record<string, AggregationValue> = {};
    query.groupBy.forEach((gb, i) => (out[gb.key] = g.keys[i]!));
    query.aggregates.forEach((a, i) => {
      const acc = g.accs[i]!;
      const spec = aggSpecs[i];
      switch (a.fn) {
        case 'count':
          out[a.key] = acc.count;
          break;
        case 'sum':
          out[a.key] = spec!.kind === 'big' ? BigInt(acc.sum).toString() : Number(acc.sum);
          break;
        case 'avg':
          out[a.key] = acc.count === 0 ? null : Number(acc.sum) / acc.count;
          break;
        case 'min':
        case 'max': {
          const v = a.fn === 'min' ? acc.min : acc.max;
          out[a.key] = v === null ? null : typeof v === 'bigint' ? v.toString() : spec!.wire === 'string' ? String(v) : v;
          break;
        }
      }
    });
    return out;
  });
  // GROUP BY without ORDER BY has no order.
  const ordered = engine.unstableOrder && query.sortBy === null ? shuffled(rows, (_, i) => hash3(engine.requestKey ?? 0, i, 0x6b)) : rows;
  const { skip, end } = pageBounds(query.limit, query.page);
  return ordered.slice(skip, end);
}
