/**
 * What a sandbox server can be asked for: its routes, faults and options (the types only; the
 * server, the profiles and the answers all read them).
 */
import type { SandboxData } from './data.js';
import type { InconsistencyOptions } from './inconsistencies.js';
import type { CatalogOptions } from './catalog/catalog-options.js';

/** The profiles (src/profiles.ts): defaults for the behaviour options. */
export type SandboxProfile = 'contract' | 'indexer' | 'hostile';

export type SandboxRoute = 'transactions' | 'events' | 'resolve' | 'decode' | 'nft' | 'nft-list';
export type FaultKind = 'http500' | 'http502' | 'http503' | 'http429' | 'reset' | 'truncate' | 'stall';

export interface FaultOptions {
  /** Each 0..1, per request; at most one fault per request (the rates add up). */
  rates: Partial<Record<FaultKind, number>>;
  /** Stalled body: headers + part of the body, then silence for this long (default 60_000), then the socket closes. */
  stallMs?: number;
  /** Sent with injected 429s (header omitted when undefined). */
  retryAfterSeconds?: number;
  /** Fault decisions come from a PRNG seeded with this (default 1). */
  seed?: number;
  /** The first requests that get faults get these, in order; the rates apply after them. */
  first?: FaultKind[];
  /** Routes that get faults (default: all). */
  routes?: SandboxRoute[];
  /** Injected 502/503 answered with an HTML error page, as a load balancer or CDN in front of the service sends. */
  htmlPages?: boolean;
}

/** The sandbox's options; those of a service answering inconsistently for a while are in InconsistencyOptions (inconsistencies.ts). */
export interface SandboxOptions extends InconsistencyOptions {
  /** Default 42; same seed => byte-identical data. */
  seed?: number;
  /** Total transactions across all chains, default 20_000. */
  transactions?: number;
  /** Use a prebuilt data set (same shape as buildSandboxData) instead of building one. */
  data?: SandboxData;
  host?: string;
  port?: number;
  /** Default '/insights/v1'. */
  pathPrefix?: string;
  /** Default '/api/v2'. */
  explorerPrefix?: string;
  latency?: { fixedMs: number; jitterMs: number };
  /** Over the limit: 429 {"error"} + Retry-After (default 1 s). */
  rateLimit?: { requestsPerSecond: number; retryAfterSeconds?: number };
  faults?: FaultOptions;
  /** Collections per NFT page, default 50. */
  nftPageSize?: number;
  /** The Iceberg REST catalog served at /iceberg: its warehouse and knobs (src/catalog/catalog-options.ts). */
  catalog?: CatalogOptions;
  /** When set, requests without a matching x-client-id or x-secret-key get 401. */
  auth?: { clientId?: string; secretKey?: string };
  /**
   * Named defaults for the behaviour options below (src/sandbox/profiles.ts): 'contract' (the
   * default), 'indexer' (every behaviour of the real indexer), 'hostile' (indexer + misbehaviours).
   * Options set explicitly override the profile's.
   */
  profile?: SandboxProfile;
  /** Return self-transfers twice on the wallet route, adjacent, paging otherwise exact (a part of `walletUnion`). */
  duplicateSelfTransfers?: boolean;
  /**
   * The wallet route as the indexer's UNION ALL query: from- and to-halves each `LIMIT 2*limit
   * OFFSET page*limit`, the union `LIMIT limit OFFSET page*limit` without ORDER BY, the halves in
   * an order drawn per request; group_by with aggregates (or aggregates with sort_by) a 500,
   * aggregates alone one row per half.
   */
  walletUnion?: boolean;
  /** Rows tied on the sort key come in a new order on each request; without sort_by (rows or groups), no order at all. */
  unstableOrder?: boolean;
  /** The indexer's limit and page: default limit 5, no cap on either; limit <= 0 means no LIMIT, page < 0 no OFFSET. */
  indexerLimits?: boolean;
  /** Chain ids a list request (transactions, events) or resolve may name (1..55); more are refused with a 400 "too many chain ids". Default: the contract's 55. */
  maxChainIdsPerRequest?: number;
  /**
   * Rate (0..1) of list pages after the first that start early, repeating rows an earlier page
   * carried in earlier blocks (pages of the plain query: with `walletUnion` the wallet route repeats rows its own way).
   */
  repeatEarlierRows?: number;
  /**
   * Rate (0..1) of list rows followed by a row at the same position of another wallet (the wallet
   * route), contract or event (the events route), or chain: a server whose filters let them
   * through. They take the place of the chain's last rows under the limit; counted in stats().
   */
  foreignRows?: number;
  /** Rate (0..1) of list answers that are HTTP 200 with an `{"error": ...}` body. */
  okErrorBody?: number;
  /** Rate (0..1) of list answers asked for rows that are HTTP 200 with `data: null` or without `data`. */
  okWithoutData?: number;
  /** Some rows use the older wire types: block_number as a string, value as a number. */
  legacyTypes?: boolean;
  /** Some decoded bytes values come as base64 or arrays of numbers instead of hex. */
  decodedVariants?: boolean;
  /**
   * Decoded values as the open-source indexer serialises them: base64 bytes, bytesN as number
   * arrays, big ints in tuples and fixed arrays as bare JSON numbers, events decoded without
   * decode=true, `{"name":""}` when decoding fails (src/sandbox/go-values.ts).
   */
  goValues?: boolean;
  /**
   * Aggregations as the open-source indexer sends them: RFC 3339 times, quoted UInt256, groups
   * in no order, one row of zeros for an ungrouped aggregate over no rows, and on the wallet
   * route one row per UNION half (aggregate only) or a 500 (group_by with aggregate).
   */
  goAggregations?: boolean;
  /** Build the data set with the `rich` contract (tuple, array, bytes, negative-int arguments). */
  richContract?: boolean;
  /** Build the data set with this many small chains more (see BuildOptions.extraChains). */
  extraChains?: number;
  /** Answer in br or gzip when the request accepts it, as a CDN does (cdn-compression.ts); default true. */
  compress?: boolean;
  // What the real service does, one option per behaviour (profiles.ts turns them all on).
  /** Blockscout: at most this many token instances per NFT collection, highest id first (Blockscout: 9). */
  nftInstanceLimit?: number;
  /** Blockscout: an ERC-1155 collection's `amount` is its number of distinct token instances. */
  nftDistinctAmount?: boolean;
  /** Blockscout: NFT token, owner and holder addresses in EIP-55 checksum case. */
  nftChecksummed?: boolean;
  /** Keys of an NFT `token`: address/holders (old, default), address_hash/holders_count (new), or both. */
  nftTokenKeys?: 'old' | 'both' | 'new';
  /** Blockscout: NFT collections ERC-721, then ERC-1155, then ERC-404, each by contract hash. */
  nftTypeOrder?: boolean;
  /** Blockscout: next_page_params echoes the request's parameters plus the cursor and items_count. */
  nftEchoPageParams?: boolean;
  /** Blockscout: also serve the ungrouped addresses/<hash>/nft route, paging every instance. */
  nftUngroupedRoute?: boolean;
  /** insight: error bodies {code, message, support_id} instead of {error}. */
  insightErrorBodies?: boolean;
  /** insight: an unparsable event signature, or a block resolve does not have, answers 500 with an empty body (a Go panic). */
  panicsAs500?: boolean;
  /** insight: an aggregate expression or filter column the query engine rejects answers 500 "An unexpected error occurred.". */
  sqlErrorsAs500?: boolean;
  /** insight: meta fields omitted when zero (total_pages never sent), data/aggregations omitted rather than null, resolve of nothing `data: {}`. */
  omitEmpty?: boolean;
  /** insight: resolve takes decimal numbers and 0x inputs of 10, 42 or 66 characters only (else 400 invalid input); no type unknown, no data.address. */
  strictResolve?: boolean;
  /**
   * The service's index reaches this block time only (unix seconds): later rows, counts and blocks
   * are not served, as an indexer lagging the chain or back-filling it (src/sandbox/indexing-lag.ts).
   * Moved while serving with setIndexedUntil.
   */
  indexedUntil?: number;
  /** insight: records as its ClickHouse columns: to_address "" for creations, function_selector "" for plain transfers, fee fields "0" on legacy transactions, max_fee_per_blob_gas and blob_versioned_hashes. */
  indexerRecords?: boolean;
}
