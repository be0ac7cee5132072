import { MAX_CHAIN_IDS, MAX_LIMIT, MAX_PAGE, MAX_PAGE_AGGREGATED } from '../../../src/shared-with-sandbox.js';
import { badRequest, sqlError } from './errors.js';

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
