/**
 * Normalised records of the read interface, as its contract defines them.
 * The client turns whatever the service sends (older types included: block_number as a string,
 * value as a number; see src/source/response-records.ts)
 * into exactly these shapes:
 *  - chain_id is always a number (the wire sends a string in transactions/events);
 *  - block_number, block_timestamp, indexes, gas amounts are numbers (safe integers);
 *  - uint256 quantities (value, gas prices, fees, r/s/v, difficulty) are exact decimal strings;
 *  - hashes, addresses and hex data are lowercase 0x strings;
 *  - a field the service left out or sent as null is null.
 * The fields of transactions, events and blocks, and their types, are those of src/columns/record-fields.ts.
 */
import type { BLOCK_FIELDS, BLOCK_HEADER_FIELDS, EVENT_FIELDS, RecordOf, TRANSACTION_FIELDS } from '../columns/record-fields.js';

export type Hex = `0x${string}`;

export interface DecodedTransaction {
  name: string;
  signature: string;
  inputs: Record<string, unknown>;
}

export interface DecodedEvent {
  name: string;
  signature: string;
  indexed_params: Record<string, unknown>;
  non_indexed_params: Record<string, unknown>;
}

/** A transaction: the fields of BLOCK_FIELDS and TRANSACTION_FIELDS. */
export interface TransactionRecord extends RecordOf<readonly [...typeof BLOCK_FIELDS, ...typeof TRANSACTION_FIELDS]> {
  decoded?: DecodedTransaction | null;
}

/** A log: the fields of BLOCK_FIELDS and EVENT_FIELDS, and its topics. */
export interface EventRecord extends RecordOf<readonly [...typeof BLOCK_FIELDS, ...typeof EVENT_FIELDS]> {
  topics: string[];
  decoded?: DecodedEvent | null;
}

/** A block header: the fields of BLOCK_FIELDS and BLOCK_HEADER_FIELDS. */
export type BlockRecord = RecordOf<readonly [...typeof BLOCK_FIELDS, ...typeof BLOCK_HEADER_FIELDS]>;

export interface ResponseMeta {
  chain_ids: number[];
  page: number;
  limit_per_chain: number;
  total_items: number;
  total_pages: number;
  address?: string | undefined;
  signature?: string | undefined;
}

/** One row of `aggregations`: group columns plus one key per aggregate (alias or raw expression). */
export type AggregationRow = Record<string, string | number | boolean | null>;

export interface ListResponse<T> {
  meta: ResponseMeta;
  data: T[];
  /** Present (an array) when the request used group_by or aggregate. */
  aggregations: AggregationRow[] | null;
}

export type ResolveType = 'block' | 'transaction' | 'event_signature' | 'function_signature' | 'address' | 'contract' | 'unknown';

export interface ResolveData {
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- names the known types and still takes a new one
  type: ResolveType | string;
  blocks: BlockRecord[];
  transactions: TransactionRecord[];
  events: EventRecord[];
  address: string | null;
}

export interface ResolveResponse {
  meta: ResponseMeta;
  data: ResolveData;
}

export interface DecodeRequestBody {
  transactions?: { data: string }[];
  logs?: { topics: string[]; data: string }[];
}

export interface DecodedTransactionResult {
  data: string;
  function_name: string | null;
  args: unknown[];
}

export interface DecodedLogResult {
  topics: string[];
  data: string;
  event_name: string | null;
  args: unknown[];
}

export interface DecodeResponse {
  data: { transactions: DecodedTransactionResult[]; logs: DecodedLogResult[] };
}

export interface NftTagRef {
  address_hash: string | null;
  display_name: string | null;
  label: string | null;
}

export interface NftOwner {
  hash: string;
  implementation_name: string | null;
  name: string | null;
  is_contract: boolean | null;
  is_verified: boolean | null;
  ens_domain_name: string | null;
  private_tags: NftTagRef[];
  public_tags: NftTagRef[];
  watchlist_names: { display_name: string | null; label: string | null }[];
  metadata: Record<string, unknown> | null;
}

export interface NftToken {
  circulating_market_cap: string | null;
  icon_url: string | null;
  name: string | null;
  decimals: string | null;
  symbol: string | null;
  address: string;
  type: string;
  holders: string | null;
  exchange_rate: string | null;
  total_supply: string | null;
}

export interface NftTokenInstance {
  is_unique: boolean | null;
  id: string;
  owner: NftOwner | null;
  token_type: string | null;
  value: string | null;
  holder_address_hash: string | null;
  image_url: string | null;
  animation_url: string | null;
  external_app_url: string | null;
  metadata: Record<string, unknown> | null;
  token: unknown;
}

export interface NftCollection {
  token: NftToken;
  token_instances: NftTokenInstance[];
  amount: string;
}

/** An item of the ungrouped addresses/<hash>/nft route: one token instance with its collection's token. */
export interface NftListedInstance {
  token: NftToken;
  instance: NftTokenInstance;
}

export interface NftInstancesPage {
  items: NftListedInstance[];
  /** As in NftCollectionsPage. */
  next_page_params: Record<string, string | number> | null;
}

export interface NftCollectionsPage {
  items: NftCollection[];
  /** Send every key back as a query parameter for the next page; null on the last page. */
  next_page_params: Record<string, string | number> | null;
}
