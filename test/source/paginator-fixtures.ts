/** What the paginator tests page through: rows of a fake list endpoint, windowed on block numbers. */
import type { RequestPool, WindowPagerOptions } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';

export interface Rec {
  chain: number;
  block: number;
  id: string;
}

/** A fake endpoint's answer: the page of `limit` rows per chain within the window's filters. */
export type RecFetch = (chains: number[], filters: Filters, page: number, limit: number) => Promise<Rec[]>;

/** pageWindow options over Rec rows on the block axis (filter_block_number_gte/_lt, no job filters). */
export function blockWindowOptions(
  fetch: RecFetch,
  o: { chainIds: number[]; start: number; end: number; limit: number; maxPage: number; prefetch: number; pool?: RequestPool },
): WindowPagerOptions<Rec> {
  return {
    chainIds: o.chainIds,
    start: o.start,
    end: o.end,
    lowerFilter: 'filter_block_number_gte',
    upperFilter: 'filter_block_number_lt',
    baseFilters: {},
    limit: o.limit,
    maxPage: o.maxPage,
    prefetch: o.prefetch,
    ...(o.pool ? { pool: o.pool } : {}),
    fetch: (chains, filters, page) => fetch(chains, filters, page, o.limit),
    chainId: (r) => r.chain,
    axisValue: (r) => r.block,
    itemId: (r) => r.id,
  };
}
