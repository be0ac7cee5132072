/**
 * A service whose index lags the chain: it serves blocks up to a block time only (`indexedUntil`),
 * as an indexer keeping its tip behind the chain on purpose (thirdweb-dev/insight PR #313, "lag
 * tip by x blocks") or back-filling a chain it added recently. Rows, counts and blocks after that
 * time do not exist for its clients: list routes and their aggregates leave them out, resolve of a
 * later block finds none, resolve of an address lists none of its later rows.
 */
import type { ReadInterfaceSource } from './data.js';
import type { ListQuery } from './query.js';

/** `data` as served by an index that reaches `until()` (unix seconds; undefined: everything). */
export function indexedUntil<D extends ReadInterfaceSource>(data: D, until: () => number | undefined): ReadInterfaceSource {
  const bounded = (query: ListQuery): ListQuery => {
    const t = until();
    return t === undefined ? query : { ...query, filters: [...query.filters, { column: 'block_timestamp', op: 'lte', value: t }] };
  };
  const indexed = (row: { block_timestamp: number }) => {
    const t = until();
    return t === undefined || row.block_timestamp <= t;
  };
  return {
    parseTransactionsQuery: (params, rules) => bounded(data.parseTransactionsQuery(params, rules)),
    parseEventsQuery: (params, rules) => bounded(data.parseEventsQuery(params, rules)),
    walletTransactions: (wallet, query, opts) => data.walletTransactions(wallet, query, opts),
    contractEvents: (contract, signature, query, opts) => data.contractEvents(contract, signature, query, opts),
    resolve: (input, chainIds) => {
      const r = data.resolve(input, chainIds);
      const d = r.data;
      return {
        meta: r.meta,
        data: { ...d, blocks: d.blocks.filter(indexed), transactions: d.transactions.filter(indexed), events: d.events.filter(indexed) },
      };
    },
    decode: (contract, body, chainIds) => data.decode(contract, body, chainIds),
    nftCollectionsPage: (address, params) => data.nftCollectionsPage(address, params),
    nftInstancesPage: (address, params) => data.nftInstancesPage(address, params),
  };
}
