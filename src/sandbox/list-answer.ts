import type { ResponseMeta } from '../source/records.js';
import type { BytesStyle } from './abi.js';
import type { ListOptions, ListResult } from './data.js';
import { SandboxHttpError } from './errors.js';
import { goAggregationRows } from './go-aggregations.js';
import { hash3 } from './prng.js';
import { aggregate, selectPage, type ChainSource, type ColumnCatalog, type ListQuery, type SelectedRow } from './query.js';

const STYLES: BytesStyle[] = ['hex', 'base64', 'array'];

/**
 * The answer of a list route (wallet transactions, contract events) over per-chain sources:
 * group_by/aggregate queries answer `aggregations`, the others a page of `data` (limit per chain,
 * page) with the row handles in `rowKeys`. `chainIds` is what meta.chain_ids says when the query
 * named no chains. `halves` (wallet route: the from- and the to-rows) are what the open-source
 * indexer's UNION ALL aggregates separately under `goAggregations`.
 */
export function listAnswer<S, T>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  chainIds: number[],
  extra: Partial<ResponseMeta>,
  record: (r: SelectedRow<S>) => T,
  opts: ListOptions = {},
  halves?: ChainSource<S>[][],
): ListResult<T> {
  if (query.groupBy.length > 0 || query.aggregates.length > 0) {
    let aggregations;
    if (opts.goAggregations) {
      // GROUP BY outside a UNION of sub-queries that aggregate without one: ClickHouse refuses it.
      if (halves && query.groupBy.length > 0 && query.aggregates.length > 0) throw new SandboxHttpError(500, 'An unexpected error occurred.');
      const parts = halves && query.groupBy.length === 0 ? halves : [sources];
      const any = catalog as ColumnCatalog<unknown>;
      aggregations = parts.flatMap((part, i) => goAggregationRows(aggregate(part, query, catalog), query, any, i + 1));
    } else {
      aggregations = aggregate(sources, query, catalog);
    }
    return { meta: listMeta(query, chainIds, aggregations.length, extra), aggregations };
  }
  const rows = selectPage(sources, query, catalog);
  return {
    meta: listMeta(query, chainIds, rows.length, extra),
    data: rows.map((r) => record(r)),
    rowKeys: rows.map((r) => r.row),
  };
}

function listMeta(query: ListQuery, chainIds: number[], items: number, extra: Partial<ResponseMeta>): ResponseMeta {
  return {
    chain_ids: query.chainIds ?? chainIds,
    page: query.page,
    limit_per_chain: query.limit,
    total_items: items,
    total_pages: 0,
    ...extra,
  };
}

/** How a row's decoded bytes are rendered: hex, or with `decodedVariants` one of hex/base64/array by (chain key, row). */
export function decodedStyle(chainKey: number, row: number, opts: ListOptions): BytesStyle {
  return opts.decodedVariants ? STYLES[hash3(chainKey, row, 0x5717) % 3]! : 'hex';
}
