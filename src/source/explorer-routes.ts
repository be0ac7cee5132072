/**
 * The explorer's routes paged by next_page_params (operation 5 and Blockscout's ungrouped NFT
 * route): each route's request name, path and answer check, and the walk from page to page that
 * ends when the service sends the same page parameters again.
 */
import type { NftCollectionsPage, NftInstancesPage } from './records.js';
import { nftCollectionsPath, nftInstancesPath, type NftTokenType } from './query.js';
import { normaliseNftCollectionsPage, normaliseNftInstancesPage } from './nft-answers.js';

export type NftRouteOptions = { types?: NftTokenType[]; chainIds?: number[] };
export type NftPageOptions = NftRouteOptions & { pageParams?: Record<string, string | number> };

/** An explorer route paged by next_page_params: its request name, path and answer check. */
export interface ExplorerRoute<Page> {
  op: string;
  path(address: string, opts: NftPageOptions): string;
  normalise(json: unknown, url: string): Page;
}

export const NFT_COLLECTIONS_ROUTE: ExplorerRoute<NftCollectionsPage> = {
  op: 'nftCollections',
  path: nftCollectionsPath,
  normalise: normaliseNftCollectionsPage,
};
export const NFT_INSTANCES_ROUTE: ExplorerRoute<NftInstancesPage> = {
  op: 'nftInstances',
  path: nftInstancesPath,
  normalise: normaliseNftInstancesPage,
};

export async function* followPages<T>(
  page: (
    pageParams: Record<string, string | number> | undefined,
  ) => Promise<{ items: T[]; next_page_params: Record<string, string | number> | null }>,
  loopError: (next: Record<string, string | number>) => Error,
): AsyncGenerator<T> {
  const seen = new Set<string>();
  let pageParams: Record<string, string | number> | undefined;
  for (;;) {
    const answer = await page(pageParams);
    for (const item of answer.items) yield item;
    const next = answer.next_page_params;
    if (next === null) return;
    const key = canonicalParams(next);
    if (seen.has(key) || (pageParams !== undefined && key === canonicalParams(pageParams))) {
      throw loopError(next);
    }
    seen.add(key);
    pageParams = next;
  }
}

function canonicalParams(params: Record<string, string | number>): string {
  return JSON.stringify(
    Object.keys(params)
      .sort()
      .map((k) => [k, String(params[k])]),
  );
}
