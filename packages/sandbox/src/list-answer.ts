import type { AggregationRow, ResponseMeta } from '../../../src/shared-with-sandbox.js';
import type { BytesStyle } from './abi.js';
import { goAggregationRows } from './go-aggregations.js';
import { hash3 } from './prng.js';
import { type ColumnCatalog, type ListQuery } from './query.js';
import { selectPage, type ChainSource, type EngineOptions, type SelectedRow } from './query-select.js';
import { aggregate } from './query-aggregate.js';
import { walletUnionAggregations, walletUnionRows } from './wallet-union.js';

/** Options of the list queries that change what the (simulated) service sends. */
export interface ListOptions extends EngineOptions {
  /** Return a self-transfer twice (adjacent, paging otherwise exact): the part of `walletUnion` a client sees on every page. */
  duplicateSelfTransfers?: boolean | undefined;
  /** Answer the wallet route with the indexer's UNION ALL query (src/sandbox/wallet-union.ts). */
  walletUnion?: boolean | undefined;
  /** Render some decoded bytes values as base64 or number arrays (deterministic per row). */
  decodedVariants?: boolean | undefined;
  /** Decoded values as the open-source indexer serialises them (see go-values.ts). */
  goValues?: boolean | undefined;
  /** Aggregation rows as the open-source indexer sends them (see go-aggregations.ts). */
  goAggregations?: boolean | undefined;
}

/**
 * A list result with normalised records (chain_id a number, as in src/source/records.ts).
 * `data` is absent and `aggregations` set when the query used group_by/aggregate.
 */
export interface ListResult<T> {
  meta: ResponseMeta;
  data?: T[];
  aggregations?: AggregationRow[];
  /** Row handles of `data` (same order), for per-row wire variations. */
  rowKeys?: number[];
}

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
    let aggregations = union ? walletUnionAggregations(sources, query, catalog, opts) : aggregate(sources, query, catalog, opts);
    if (opts.goAggregations) aggregations = goAggregationRows(aggregations, query, catalog as ColumnCatalog<unknown>, 1);
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
