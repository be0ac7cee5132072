/** The selection engine of list queries: a chain's rows narrowed by the filters, ordered, paged. */
import { hash3 } from './prng.js';
import { repeatEarlierRows, shuffleTies, shuffled } from './request-order.js';
import { pageBounds, type CellValue, type ColumnCatalog, type Filter, type FilterOp, type ListQuery } from './query.js';

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
export function walk<S>(source: ChainSource<S>, query: ListQuery, catalog: ColumnCatalog<S>, visit: (row: number) => boolean): void {
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
