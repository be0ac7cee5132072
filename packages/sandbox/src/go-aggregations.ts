import { isoTime } from '../../../src/shared-with-sandbox.js';
import { hash3 } from './prng.js';
import type { ColumnCatalog, ListQuery } from './query.js';
import type { AggregationValue } from './query-aggregate.js';

/**
 * Aggregation rows as the open-source indexer's `GetAggregations` sends them (the
 * `goAggregations` wire knob): ClickHouse DateTime/Date values as RFC 3339 strings, UInt256
 * columns (chain_id, block_number, uint256 quantities and their sums, min and max) as quoted
 * decimal strings, UInt64 columns and count() as numbers; the groups in no particular order
 * (GROUP BY without ORDER BY: here a fixed permutation per query, so pages stay consistent);
 * an ungrouped aggregate over no rows answers one row of zeros (ClickHouse's default values).
 */

/** Columns stored as UInt256 besides the uint256 quantities ('big'). */
const UINT256_COLUMNS = new Set(['chain_id', 'block_number']);

function rfc3339(seconds: number): string {
  return isoTime(seconds);
}

function columnWire(column: string, catalog: ColumnCatalog<unknown>, v: AggregationValue): AggregationValue {
  if (v === null) return null;
  if (column === 'block_timestamp') return rfc3339(Number(v));
  const spec = catalog[column];
  if (spec?.kind === 'big' || UINT256_COLUMNS.has(column)) return String(v);
  if (spec?.kind === 'num') return Number(v);
  return v;
}

function groupWire(bucket: string, column: string, catalog: ColumnCatalog<unknown>, v: AggregationValue): AggregationValue {
  if (v === null) return null;
  if (bucket === 'date' || bucket === 'startOfDay') return `${String(v).slice(0, 10)}T00:00:00Z`;
  return columnWire(column, catalog, v);
}

/** ClickHouse's value of an aggregate over no rows. */
function emptyValue(fn: string, column: string | null, catalog: ColumnCatalog<unknown>): AggregationValue {
  if (fn === 'count') return 0;
  if (fn === 'avg') return null; // nan in ClickHouse (Go cannot even marshal it)
  if (column === null) return 0;
  if (column === 'block_timestamp') return rfc3339(0);
  const spec = catalog[column];
  if (spec?.kind === 'str') return '';
  return columnWire(column, catalog, 0);
}

/** Rows of `aggregate()` (ordered by group keys, already paged) in the indexer's wire types. */
export function goAggregationRows(
  rows: Record<string, AggregationValue>[],
  query: ListQuery,
  catalog: ColumnCatalog<unknown>,
  orderSeed: number,
): Record<string, AggregationValue>[] {
  if (rows.length === 0 && query.groupBy.length === 0 && query.page === 0) {
    const zero: Record<string, AggregationValue> = {};
    for (const a of query.aggregates) zero[a.key] = emptyValue(a.fn, a.column, catalog);
    return [zero];
  }
  const out = rows.map((row) => {
    const wire: Record<string, AggregationValue> = {};
    for (const g of query.groupBy) wire[g.key] = groupWire(g.bucket, g.column, catalog, row[g.key] ?? null);
    for (const a of query.aggregates) {
      const v = row[a.key] ?? null;
      if (a.fn === 'count' || a.fn === 'avg' || a.column === null) wire[a.key] = v;
      else if (a.fn === 'sum') wire[a.key] = catalog[a.column]?.kind === 'big' || UINT256_COLUMNS.has(a.column) ? String(v) : v;
      else wire[a.key] = columnWire(a.column, catalog, v);
    }
    return wire;
  });
  // A fixed permutation (by seed and group values), as a hash table would give.
  const rank = (row: Record<string, AggregationValue>) =>
    hash3(orderSeed, hashText(JSON.stringify(query.groupBy.map((g) => row[g.key]))), 0x0dd);
  return out
    .map((row) => ({ row, r: rank(row) }))
    .sort((a, b) => a.r - b.r)
    .map((x) => x.row);
}

function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
