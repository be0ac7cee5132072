import { SandboxHttpError } from './errors.js';
import { hash3 } from './prng.js';
import { pageBounds, type ColumnCatalog, type ListQuery } from './query.js';
import { orderedRows, type ChainSource, type EngineOptions, type SelectedRow } from './query-select.js';
import { aggregate, type AggregationValue } from './query-aggregate.js';

/**
 * The wallet route as the open-source indexer's query builder writes it, per chain:
 *
 *   SELECT * FROM (
 *     (SELECT cols FROM transactions WHERE filters AND from_address = X [ORDER BY s o] LIMIT 2l OFFSET p*l)
 *     UNION ALL
 *     (SELECT cols FROM transactions WHERE filters AND to_address = X [ORDER BY s o] LIMIT 2l OFFSET p*l)
 *   ) LIMIT l OFFSET p*l
 *
 * No ORDER BY after the union, the offset applied twice, a self-transfer in both halves, and the
 * halves concatenated in an order ClickHouse does not define (drawn per request here). With
 * group_by the outer query becomes `SELECT * FROM (union) GROUP BY g`, and every half that selects
 * an aggregate without GROUP BY (or orders one by a column) fails: a 500.
 */

/** The indexer's answer to a failed ClickHouse query. */
function queryFailed(why: string): SandboxHttpError {
  return new SandboxHttpError(500, 'An unexpected error occurred.', why);
}

interface Half<S> {
  source: ChainSource<S>;
  side: 'from' | 'to';
}

/** The two halves of one chain's union, in the order this request concatenates them. */
function halves<S>(source: ChainSource<S>, engine: EngineOptions): Half<S>[] {
  const side = source.side!;
  const rows = Array.from(source.rows);
  const half = (name: 'from' | 'to'): Half<S> => ({
    side: name,
    source: { chainId: source.chainId, state: source.state, rows: rows.filter((row) => side[name](row)) },
  });
  const both = [half('from'), half('to')];
  return hash3(engine.requestKey ?? 0, source.chainId, 0xa11) & 1 ? both.reverse() : both;
}

/** Rows of one chain's union, before the outer LIMIT. */
function unionRows<S>(source: ChainSource<S>, query: ListQuery, catalog: ColumnCatalog<S>, engine: EngineOptions): number[] {
  const { skip, end } = pageBounds(query.limit, query.page, 2 * query.limit);
  return halves(source, engine).flatMap((h) => orderedRows(h.source, query, catalog, end, engine).slice(skip, end));
}

/** Data rows of the wallet route under the union query. */
export function walletUnionRows<S>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  engine: EngineOptions,
): SelectedRow<S>[] {
  const { skip, end } = pageBounds(query.limit, query.page);
  return sources.flatMap((source) =>
    unionRows(source, query, catalog, engine)
      .slice(skip, end)
      .map((row) => ({ chainId: source.chainId, state: source.state, row })),
  );
}

/** An aggregate over no rows without GROUP BY: still one row. */
function emptyAggregateRow<S>(query: ListQuery, catalog: ColumnCatalog<S>): Record<string, AggregationValue> {
  const out: Record<string, AggregationValue> = {};
  for (const a of query.aggregates) {
    const kind = a.column === null ? 'num' : catalog[a.column]!.kind;
    if (a.fn === 'avg') out[a.key] = null;
    else out[a.key] = a.fn === 'count' || kind === 'num' ? 0 : kind === 'big' ? '0' : '';
  }
  return out;
}

/** `aggregations` of the wallet route under the union query (group_by and aggregate together fail). */
export function walletUnionAggregations<S>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  engine: EngineOptions,
): Record<string, AggregationValue>[] {
  if (query.groupBy.length > 0 && query.aggregates.length > 0) {
    throw queryFailed('each half selects group columns and aggregates without GROUP BY (NOT_AN_AGGREGATE)');
  }
  if (query.aggregates.length > 0 && query.sortBy !== null) {
    throw queryFailed(`each half orders an aggregate by ${query.sortBy} (NOT_AN_AGGREGATE)`);
  }
  const outer = pageBounds(query.limit, query.page);
  const all = { ...query, limit: 0, page: 0 };
  return sources.flatMap((source) => {
    let rows: Record<string, AggregationValue>[];
    if (query.groupBy.length > 0) {
      // SELECT * FROM (union of the group columns) GROUP BY g: the distinct keys of the union's rows.
      const union = { chainId: source.chainId, state: source.state, rows: unionRows(source, query, catalog, engine) };
      rows = aggregate([union], { ...all, filters: [], sortBy: null }, catalog, engine);
    } else {
      // One row per half, then that half's LIMIT 2l OFFSET p*l over it.
      const { skip, end } = pageBounds(query.limit, query.page, 2 * query.limit);
      rows = halves(source, engine).flatMap((h) => {
        const one = aggregate([h.source], all, catalog);
        return (one.length > 0 ? one : [emptyAggregateRow(query, catalog)]).slice(skip, end);
      });
    }
    return rows.slice(outer.skip, outer.end);
  });
}
