/**
 * A lagging replica behind the same address as the full index (an indexer's replica that has
 * not caught up, or one added before it did): it knows no block, row or count after its height.
 * Which requests it answers is drawn per request (src/sandbox/inconsistencies.ts).
 */
import type { ListResult, ReadInterfaceSource } from './data.js';
import type { ListQuery } from './query.js';

/** The block time a lagging replica reaches: `until`, else `behindSeconds` (default a day) before the newest block `data` serves. */
export function replicaHeight(
  data: unknown,
  fullUntil: number | undefined,
  o: { replicaLagUntil?: number | undefined; replicaLagBehindSeconds?: number | undefined },
): number {
  const full = Math.min(fullUntil ?? Number.POSITIVE_INFINITY, newestBlockTime(data));
  if (o.replicaLagUntil !== undefined) return Math.min(o.replicaLagUntil, full);
  return full - (o.replicaLagBehindSeconds ?? 86_400);
}

/** The newest block time of the data's chains (seeded or loaded from a node); +Infinity when it has none. */
function newestBlockTime(data: unknown): number {
  const chains = (data as { chains?: { headTimestamp: number | null }[] }).chains ?? [];
  const times = chains.map((c) => c.headTimestamp).filter((t): t is number => typeof t === 'number');
  return times.length > 0 ? Math.max(...times) : Number.POSITIVE_INFINITY;
}

/** The request asks for something past `height`: a query for it alone, of one row per chain. */
function pastHeight(query: ListQuery, height: number): ListQuery {
  return {
    ...query,
    filters: [...query.filters, { column: 'block_timestamp', op: 'gt', value: height }],
    limit: 1,
    page: 0,
    groupBy: [],
    aggregates: [],
    sortBy: null,
  };
}

const below = (query: ListQuery, height: number): ListQuery => ({
  ...query,
  filters: [...query.filters, { column: 'block_timestamp', op: 'lte', value: height }],
});

/**
 * `full` as a replica whose index reaches `height()` answers it: list rows and aggregates leave
 * out later rows, resolve finds no later block, transaction or event. `missed()` is called when
 * the full index had something for the request that the replica left out.
 */
export function laggingReplica(full: ReadInterfaceSource, height: () => number, missed: () => void): ReadInterfaceSource {
  /** `query` answered below the height; `probe` (no paging options) says whether the full index has rows past it. */
  const list = <T>(probe: (q: ListQuery) => ListResult<T>, answer: (q: ListQuery) => ListResult<T>, query: ListQuery): ListResult<T> => {
    const h = height();
    if ((probe(pastHeight(query, h)).data ?? []).length > 0) missed();
    return answer(below(query, h));
  };
  return {
    parseTransactionsQuery: (params, rules) => full.parseTransactionsQuery(params, rules),
    parseEventsQuery: (params, rules) => full.parseEventsQuery(params, rules),
    walletTransactions: (wallet, query, opts) =>
      list(
        (q) => full.walletTransactions(wallet, q),
        (q) => full.walletTransactions(wallet, q, opts),
        query,
      ),
    contractEvents: (contract, signature, query, opts) =>
      list(
        (q) => full.contractEvents(contract, signature, q),
        (q) => full.contractEvents(contract, signature, q, opts),
        query,
      ),
    resolve: (input, chainIds) => {
      const r = full.resolve(input, chainIds);
      const h = height();
      const known = (row: { block_timestamp: number }) => row.block_timestamp <= h;
      const d = r.data;
      const out = { ...d, blocks: d.blocks.filter(known), transactions: d.transactions.filter(known), events: d.events.filter(known) };
      if (out.blocks.length + out.transactions.length + out.events.length < d.blocks.length + d.transactions.length + d.events.length)
        missed();
      return { meta: r.meta, data: out };
    },
    decode: (contract, body, chainIds) => full.decode(contract, body, chainIds),
    nftCollectionsPage: (address, params) => full.nftCollectionsPage(address, params),
    nftInstancesPage: (address, params) => full.nftInstancesPage(address, params),
  };
}
