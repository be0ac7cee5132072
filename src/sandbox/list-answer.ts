import type { ResponseMeta } from '../source/records.js';
import type { BytesStyle } from './abi.js';
import type { ListOptions, ListResult } from './data.js';
import { hash3 } from './prng.js';
import { aggregate, selectPage, type ChainSource, type ColumnCatalog, type ListQuery, type SelectedRow } from './query.js';
import { walletUnionAggregations, walletUnionRows } from './wallet-union.js';

const STYLES: BytesStyle[] = ['hex', 'base64', 'array'];

/**
 * The answer of a list route (wallet transactions, contract events) over per-chain sources:
 * group_by/aggregate queries answer `aggregations`, the others a page of `data` (limit per chain,
 * page) with the row handles in `rowKeys`. `chainIds` is what meta.chain_ids says when the query
 * named no chains. With `walletUnion`, wallet sources (those with a `side`) answer the indexer's
 * UNION ALL query instead.
 */
export function listAnswer<S, T>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  chainIds: number[],
  extra: Partial<ResponseMeta>,
  record: (r: SelectedRow<S>) => T,
  opts: ListOptions = {},
): ListResult<T> {
  const union = opts.walletUnion === true && sources.every((s) => s.side !== undefined);
  if (query.groupBy.length > 0 || query.aggregates.length > 0) {
    const aggregations = union ? walletUnionAggregations(sources, query, catalog, opts) : aggregate(sources, query, catalog, opts);
    return { meta: listMeta(query, chainIds, aggregations.length, extra), aggregations };
  }
  const rows = union ? walletUnionRows(sources, query, catalog, opts) : selectPage(sources, query, catalog, opts);
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
