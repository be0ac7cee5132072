/**
 * Response validation and normalisation into the record types of records.ts.
 *
 * Liberal in what it accepts, as versions of the service differ: chain_id as string or number, block_number /
 * block_timestamp as strings, uint256 quantities as numbers or hex, the deprecated `decodedData`
 * and camelCase decoded keys, Go-style `null` for empty arrays, missing optional fields.
 * Strict about the rest: anything else is a ResponseShapeError with the JSON path of the problem.
 *
 * Hot path (1M rows per run): plain loops and explicit field reads, no per-row closures or
 * regexes; JSON paths are only built when something is wrong.
 */
import type {
  AggregationRow,
  BlockRecord,
  DecodedEvent,
  DecodedLogResult,
  DecodedTransaction,
  DecodedTransactionResult,
  DecodeResponse,
  EventRecord,
  ListResponse,
  ResolveData,
  ResolveResponse,
  ResponseMeta,
  TransactionRecord,
} from './records.js';
import {
  fail,
  describe,
  isObj,
  int,
  intOrNull,
  timestamp,
  dec,
  decOrNull,
  str,
  strOrNull,
  hex,
  hexOrNull,
  objOrNull,
  arrayOrEmpty,
  record,
  type Obj,
} from './answer-fields.js';

export { normaliseNftCollectionsPage, normaliseNftInstancesPage } from './nft-answers.js';

// ---------------------------------------------------------------------------------------------
// Records

function decodedTransaction(raw: Obj, url: string, base: string, i: number): DecodedTransaction | null {
  let d = raw.decoded;
  if (d === undefined || d === null) d = raw.decodedData;
  if (d === undefined || d === null) return null;
  if (!isObj(d)) return fail(url, base, i, 'decoded', `expected an object, got ${describe(d)}`);
  const name = d.name;
  if (name === undefined || name === null || name === '') return null; // decoding failed: empty object
  const inputs = d.inputs;
  return {
    name: str(name, url, base, i, 'decoded.name'),
    signature: d.signature === undefined || d.signature === null ? '' : str(d.signature, url, base, i, 'decoded.signature'),
    inputs: inputs === undefined || inputs === null ? {} : (objOrNull(inputs, url, base, i, 'decoded.inputs') as Obj),
  };
}

function decodedEvent(raw: Obj, url: string, base: string, i: number): DecodedEvent | null {
  let d = raw.decoded;
  if (d === undefined || d === null) d = raw.decodedData;
  if (d === undefined || d === null) return null;
  if (!isObj(d)) return fail(url, base, i, 'decoded', `expected an object, got ${describe(d)}`);
  const name = d.name;
  if (name === undefined || name === null || name === '') return null;
  let indexed = d.indexed_params;
  if (indexed === undefined || indexed === null) indexed = d.indexedParams;
  let nonIndexed = d.non_indexed_params;
  if (nonIndexed === undefined || nonIndexed === null) nonIndexed = d.nonIndexedParams;
  return {
    name: str(name, url, base, i, 'decoded.name'),
    signature: d.signature === undefined || d.signature === null ? '' : str(d.signature, url, base, i, 'decoded.signature'),
    indexed_params: objOrNull(indexed, url, base, i, 'decoded.indexed_params') ?? {},
    non_indexed_params: objOrNull(nonIndexed, url, base, i, 'decoded.non_indexed_params') ?? {},
  };
}

/** `withDecoded`: list operations always carry `decoded` (null when absent); resolve never. */
export function normaliseTransaction(v: unknown, url: string, base: string, i: number, withDecoded: boolean): TransactionRecord {
  const r = record(v, url, base, i);
  const out: TransactionRecord = {
    chain_id: int(r.chain_id, url, base, i, 'chain_id'),
    block_number: int(r.block_number, url, base, i, 'block_number'),
    block_hash: hex(r.block_hash, url, base, i, 'block_hash'),
    block_timestamp: timestamp(r.block_timestamp, url, base, i, 'block_timestamp'),
    hash: hex(r.hash, url, base, i, 'hash'),
    nonce: int(r.nonce, url, base, i, 'nonce'),
    transaction_index: int(r.transaction_index, url, base, i, 'transaction_index'),
    from_address: hex(r.from_address, url, base, i, 'from_address'),
    to_address: hexOrNull(r.to_address, url, base, i, 'to_address'),
    value: dec(r.value, url, base, i, 'value'),
    gas_price: decOrNull(r.gas_price, url, base, i, 'gas_price'),
    gas: int(r.gas, url, base, i, 'gas'),
    function_selector: hexOrNull(r.function_selector, url, base, i, 'function_selector'),
    data: r.data === undefined || r.data === null ? '0x' : hex(r.data, url, base, i, 'data'),
    max_fee_per_gas: decOrNull(r.max_fee_per_gas, url, base, i, 'max_fee_per_gas'),
    max_priority_fee_per_gas: decOrNull(r.max_priority_fee_per_gas, url, base, i, 'max_priority_fee_per_gas'),
    transaction_type:
      r.transaction_type === undefined || r.transaction_type === null ? 0 : int(r.transaction_type, url, base, i, 'transaction_type'),
    r: decOrNull(r.r, url, base, i, 'r'),
    s: decOrNull(r.s, url, base, i, 's'),
    v: decOrNull(r.v, url, base, i, 'v'),
    access_list_json: strOrNull(r.access_list_json, url, base, i, 'access_list_json'),
    authorization_list_json: strOrNull(r.authorization_list_json, url, base, i, 'authorization_list_json'),
    contract_address: hexOrNull(r.contract_address, url, base, i, 'contract_address'),
    gas_used: intOrNull(r.gas_used, url, base, i, 'gas_used'),
    cumulative_gas_used: intOrNull(r.cumulative_gas_used, url, base, i, 'cumulative_gas_used'),
    effective_gas_price: decOrNull(r.effective_gas_price, url, base, i, 'effective_gas_price'),
    blob_gas_used: intOrNull(r.blob_gas_used, url, base, i, 'blob_gas_used'),
    blob_gas_price: decOrNull(r.blob_gas_price, url, base, i, 'blob_gas_price'),
    logs_bloom: hexOrNull(r.logs_bloom, url, base, i, 'logs_bloom'),
    status: intOrNull(r.status, url, base, i, 'status'),
  };
  if (out.transaction_type < 2) {
    // Legacy and access-list transactions have no EIP-1559 fees; the indexer's columns say "0".
    if (out.max_fee_per_gas === '0') out.max_fee_per_gas = null;
    if (out.max_priority_fee_per_gas === '0') out.max_priority_fee_per_gas = null;
  }
  if (withDecoded) out.decoded = decodedTransaction(r, url, base, i);
  return out;
}

function topicsOf(v: unknown, url: string, base: string, i: number): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) return fail(url, base, i, 'topics', `expected an array, got ${describe(v)}`);
  const out = new Array<string>(v.length);
  for (let j = 0; j < v.length; j++) {
    const t: unknown = v[j];
    if (typeof t !== 'string') return fail(url, base, i, `topics[${j}]`, `expected a hex string, got ${describe(t)}`);
    out[j] = t.toLowerCase();
  }
  return out;
}

export function normaliseEvent(v: unknown, url: string, base: string, i: number, withDecoded: boolean): EventRecord {
  const r = record(v, url, base, i);
  const out: EventRecord = {
    chain_id: int(r.chain_id, url, base, i, 'chain_id'),
    block_number: int(r.block_number, url, base, i, 'block_number'),
    block_hash: hex(r.block_hash, url, base, i, 'block_hash'),
    block_timestamp: timestamp(r.block_timestamp, url, base, i, 'block_timestamp'),
    transaction_hash: hex(r.transaction_hash, url, base, i, 'transaction_hash'),
    transaction_index: int(r.transaction_index, url, base, i, 'transaction_index'),
    log_index: int(r.log_index, url, base, i, 'log_index'),
    address: hex(r.address, url, base, i, 'address'),
    data: r.data === undefined || r.data === null ? '0x' : hex(r.data, url, base, i, 'data'),
    topics: topicsOf(r.topics, url, base, i),
  };
  if (withDecoded) out.decoded = decodedEvent(r, url, base, i);
  return out;
}

export function normaliseBlock(v: unknown, url: string, base: string, i: number): BlockRecord {
  const r = record(v, url, base, i);
  return {
    chain_id: int(r.chain_id, url, base, i, 'chain_id'),
    block_number: int(r.block_number, url, base, i, 'block_number'),
    block_hash: hex(r.block_hash, url, base, i, 'block_hash'),
    parent_hash: hex(r.parent_hash, url, base, i, 'parent_hash'),
    block_timestamp: timestamp(r.block_timestamp, url, base, i, 'block_timestamp'),
    nonce: strOrNull(r.nonce, url, base, i, 'nonce'),
    sha3_uncles: hexOrNull(r.sha3_uncles, url, base, i, 'sha3_uncles'),
    mix_hash: hexOrNull(r.mix_hash, url, base, i, 'mix_hash'),
    miner: hexOrNull(r.miner, url, base, i, 'miner'),
    state_root: hexOrNull(r.state_root, url, base, i, 'state_root'),
    transactions_root: hexOrNull(r.transactions_root, url, base, i, 'transactions_root'),
    receipts_root: hexOrNull(r.receipts_root, url, base, i, 'receipts_root'),
    logs_bloom: hexOrNull(r.logs_bloom, url, base, i, 'logs_bloom'),
    size: intOrNull(r.size, url, base, i, 'size'),
    extra_data: hexOrNull(r.extra_data, url, base, i, 'extra_data'),
    difficulty: decOrNull(r.difficulty, url, base, i, 'difficulty'),
    total_difficulty: decOrNull(r.total_difficulty, url, base, i, 'total_difficulty'),
    transaction_count: intOrNull(r.transaction_count, url, base, i, 'transaction_count'),
    gas_limit: intOrNull(r.gas_limit, url, base, i, 'gas_limit'),
    gas_used: intOrNull(r.gas_used, url, base, i, 'gas_used'),
    withdrawals_root: hexOrNull(r.withdrawals_root, url, base, i, 'withdrawals_root'),
    base_fee_per_gas: intOrNull(r.base_fee_per_gas, url, base, i, 'base_fee_per_gas'),
  };
}

// ---------------------------------------------------------------------------------------------
// Envelopes

export interface MetaFallback {
  chainIds?: number[];
  page?: number;
  limit?: number;
}

export function normaliseMeta(v: unknown, url: string, fallback: MetaFallback = {}): ResponseMeta {
  if (!isObj(v)) return fail(url, '$', -1, 'meta', `expected an object, got ${describe(v)}`);
  let chainIds: number[];
  if (v.chain_ids !== undefined && v.chain_ids !== null) {
    const raw = v.chain_ids;
    if (!Array.isArray(raw)) return fail(url, '$.meta', -1, 'chain_ids', `expected an array, got ${describe(raw)}`);
    chainIds = new Array<number>(raw.length);
    for (let j = 0; j < raw.length; j++) chainIds[j] = int(raw[j], url, '$.meta.chain_ids', j, '');
  } else if (v.chain_id !== undefined && v.chain_id !== null) {
    chainIds = [int(v.chain_id, url, '$.meta', -1, 'chain_id')]; // open-source indexer: one chain
  } else {
    chainIds = fallback.chainIds ?? [];
  }
  const limit = v.limit_per_chain ?? v.limit;
  const meta: ResponseMeta = {
    chain_ids: chainIds,
    page: v.page === undefined || v.page === null ? (fallback.page ?? 0) : int(v.page, url, '$.meta', -1, 'page'),
    limit_per_chain: limit === undefined || limit === null ? (fallback.limit ?? 0) : int(limit, url, '$.meta', -1, 'limit_per_chain'),
    total_items: intOrNull(v.total_items, url, '$.meta', -1, 'total_items') ?? 0,
    total_pages: intOrNull(v.total_pages, url, '$.meta', -1, 'total_pages') ?? 0,
  };
  if (v.address !== undefined && v.address !== null) meta.address = hex(v.address, url, '$.meta', -1, 'address');
  if (v.signature !== undefined && v.signature !== null) meta.signature = str(v.signature, url, '$.meta', -1, 'signature');
  return meta;
}

function aggregationRows(v: unknown[], url: string, base: string): AggregationRow[] {
  const rows = new Array<AggregationRow>(v.length);
  for (let i = 0; i < v.length; i++) {
    const raw = record(v[i], url, base, i);
    const row: AggregationRow = {};
    for (const key in raw) {
      const value = raw[key];
      if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        row[key] = value;
      } else if (value === undefined) {
        row[key] = null;
      } else {
        row[key] = JSON.stringify(value); // nested values (arrays, tuples) kept as JSON text
      }
    }
    rows[i] = row;
  }
  return rows;
}

export type ListKind = 'transactions' | 'events';

/**
 * A list envelope (operations 1 and 2). For aggregate queries the rows are in `aggregations`
 * (tolerated in `data` when `aggregations` is absent) and `data` is empty.
 */
export function normaliseListResponse(
  json: unknown,
  url: string,
  kind: 'transactions',
  aggregated: boolean,
  fallback?: MetaFallback,
): ListResponse<TransactionRecord>;
export function normaliseListResponse(
  json: unknown,
  url: string,
  kind: 'events',
  aggregated: boolean,
  fallback?: MetaFallback,
): ListResponse<EventRecord>;
export function normaliseListResponse(
  json: unknown,
  url: string,
  kind: ListKind,
  aggregated: boolean,
  fallback: MetaFallback = {},
): ListResponse<TransactionRecord> | ListResponse<EventRecord> {
  if (!isObj(json)) return fail(url, '$', -1, '', `expected an object, got ${describe(json)}`);
  const meta = normaliseMeta(json.meta, url, fallback);
  const rawAgg = json.aggregations;
  const rawData = json.data;

  if (aggregated) {
    let rows: AggregationRow[];
    if (Array.isArray(rawAgg)) rows = aggregationRows(rawAgg, url, '$.aggregations');
    else if (rawAgg === null && (rawData === undefined || rawData === null)) rows = [];
    else if (Array.isArray(rawData)) rows = aggregationRows(rawData, url, '$.data');
    else return fail(url, '$', -1, 'aggregations', `expected an array of aggregation rows, got ${describe(rawAgg)}`);
    return { meta, data: [], aggregations: rows };
  }

  // Never an empty page: the client retries a 2xx without rows (see listPageCheck) before this.
  if (!Array.isArray(rawData))
    return fail(url, '$', -1, 'data', `expected an array of records, got ${rawData === undefined ? 'missing' : describe(rawData)}`);
  const raw = rawData;
  const n = raw.length;
  let aggregations: AggregationRow[] | null = null;
  if (Array.isArray(rawAgg)) aggregations = aggregationRows(rawAgg, url, '$.aggregations');
  if (kind === 'transactions') {
    const data = new Array<TransactionRecord>(n);
    for (let i = 0; i < n; i++) data[i] = normaliseTransaction(raw[i], url, '$.data', i, true);
    return { meta, data, aggregations };
  }
  const data = new Array<EventRecord>(n);
  for (let i = 0; i < n; i++) data[i] = normaliseEvent(raw[i], url, '$.data', i, true);
  return { meta, data, aggregations };
}

export function normaliseResolveResponse(json: unknown, url: string, fallback: MetaFallback = {}): ResolveResponse {
  if (!isObj(json)) return fail(url, '$', -1, '', `expected an object, got ${describe(json)}`);
  const meta = normaliseMeta(json.meta, url, fallback);
  const d = json.data;
  if (!isObj(d)) return fail(url, '$', -1, 'data', `expected the resolve object, got ${describe(d)}`);
  const rawBlocks = arrayOrEmpty(d.blocks, url, '$.data', -1, 'blocks');
  const rawTxs = arrayOrEmpty(d.transactions, url, '$.data', -1, 'transactions');
  const rawEvents = arrayOrEmpty(d.events, url, '$.data', -1, 'events');
  const blocks = new Array<BlockRecord>(rawBlocks.length);
  for (let i = 0; i < rawBlocks.length; i++) blocks[i] = normaliseBlock(rawBlocks[i], url, '$.data.blocks', i);
  const transactions = new Array<TransactionRecord>(rawTxs.length);
  for (let i = 0; i < rawTxs.length; i++) transactions[i] = normaliseTransaction(rawTxs[i], url, '$.data.transactions', i, false);
  const events = new Array<EventRecord>(rawEvents.length);
  for (let i = 0; i < rawEvents.length; i++) events[i] = normaliseEvent(rawEvents[i], url, '$.data.events', i, false);
  const data: ResolveData = {
    type: d.type === undefined || d.type === null ? 'unknown' : str(d.type, url, '$.data', -1, 'type'),
    blocks,
    transactions,
    events,
    address: hexOrNull(d.address, url, '$.data', -1, 'address'),
  };
  return { meta, data };
}

export function normaliseDecodeResponse(json: unknown, url: string): DecodeResponse {
  if (!isObj(json)) return fail(url, '$', -1, '', `expected an object, got ${describe(json)}`);
  const d = json.data;
  if (!isObj(d)) return fail(url, '$', -1, 'data', `expected { transactions, logs }, got ${describe(d)}`);
  const rawTxs = arrayOrEmpty(d.transactions, url, '$.data', -1, 'transactions');
  const rawLogs = arrayOrEmpty(d.logs, url, '$.data', -1, 'logs');
  const transactions = new Array<DecodedTransactionResult>(rawTxs.length);
  for (let i = 0; i < rawTxs.length; i++) {
    const r = record(rawTxs[i], url, '$.data.transactions', i);
    transactions[i] = {
      data: hex(r.data, url, '$.data.transactions', i, 'data'),
      function_name: strOrNull(r.function_name, url, '$.data.transactions', i, 'function_name'),
      args: arrayOrEmpty(r.args, url, '$.data.transactions', i, 'args'),
    };
  }
  const logs = new Array<DecodedLogResult>(rawLogs.length);
  for (let i = 0; i < rawLogs.length; i++) {
    const r = record(rawLogs[i], url, '$.data.logs', i);
    logs[i] = {
      topics: topicsOf(r.topics, url, '$.data.logs', i),
      data: hex(r.data, url, '$.data.logs', i, 'data'),
      event_name: strOrNull(r.event_name, url, '$.data.logs', i, 'event_name'),
      args: arrayOrEmpty(r.args, url, '$.data.logs', i, 'args'),
    };
  }
  return { data: { transactions, logs } };
}
