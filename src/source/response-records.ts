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
  NftCollection,
  NftCollectionsPage,
  NftInstancesPage,
  NftListedInstance,
  NftOwner,
  NftTagRef,
  NftToken,
  NftTokenInstance,
  ResolveData,
  ResolveResponse,
  ResponseMeta,
  TransactionRecord,
} from './records.js';
import { ResponseShapeError } from './errors.js';

type Obj = Record<string, unknown>;

/** Where in the document a value sits; turned into '$.data[3].hash' only on failure. */
function pathOf(base: string, index: number, key: string): string {
  let p = base;
  if (index >= 0) p += `[${index}]`;
  if (key) p += `.${key}`;
  return p;
}

function fail(url: string, base: string, index: number, key: string, what: string): never {
  throw new ResponseShapeError('shape', url, pathOf(base, index, key), what);
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Scalars

function isDecimalDigits(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function isHexDigits(s: string, from: number): boolean {
  const n = s.length;
  if (n <= from) return false;
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) return false;
  }
  return true;
}

/**
 * A non-negative safe integer from a number, a decimal string or a 0x hex string; undefined when
 * it is none. Every integer field of a record (chain, block, index, nonce, gas, time) is a count or
 * a position, so a negative one is a broken answer, not a row of another slice.
 */
function toSafeUint(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v === 'string') {
    let n: number;
    if (isDecimalDigits(v)) n = Number(v);
    else if (v.length > 2 && v.charCodeAt(0) === 48 && (v.charCodeAt(1) === 120 || v.charCodeAt(1) === 88) && isHexDigits(v, 2))
      n = Number(v);
    else return undefined;
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

function int(v: unknown, url: string, base: string, i: number, key: string): number {
  const n = toSafeUint(v);
  if (n === undefined) fail(url, base, i, key, `expected a non-negative integer, got ${describe(v)}`);
  return n;
}

function intOrNull(v: unknown, url: string, base: string, i: number, key: string): number | null {
  if (v === undefined || v === null) return null;
  return int(v, url, base, i, key);
}

/** Unix seconds; also accepts the ClickHouse/ISO datetime strings of older versions (UTC). */
function timestamp(v: unknown, url: string, base: string, i: number, key: string): number {
  const n = toSafeUint(v);
  if (n !== undefined) return n;
  if (typeof v === 'string' && v.length >= 19 && v.charCodeAt(4) === 45) {
    const iso = v.length === 19 ? `${v.replace(' ', 'T')}Z` : v.replace(' ', 'T');
    const ms = Date.parse(iso);
    if (ms >= 0) return Math.floor(ms / 1000);
  }
  return fail(url, base, i, key, `expected unix seconds, got ${describe(v)}`);
}

/** An exact non-negative decimal string (uint256). */
function dec(v: unknown, url: string, base: string, i: number, key: string): string {
  if (typeof v === 'string') {
    if (isDecimalDigits(v)) return v.length > 1 && v.charCodeAt(0) === 48 ? BigInt(v).toString() : v;
    if (v.length > 2 && v.charCodeAt(0) === 48 && (v.charCodeAt(1) === 120 || v.charCodeAt(1) === 88) && isHexDigits(v, 2)) {
      return BigInt(v).toString();
    }
  } else if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && v >= 0) return String(v);
    // Older versions sent value as a JSON number; beyond 2^53 the precision was lost before us.
    if (Number.isInteger(v) && v >= 0) return BigInt(v).toString();
  } else if (typeof v === 'bigint' && v >= 0n) {
    return v.toString();
  }
  return fail(url, base, i, key, `expected a non-negative decimal integer, got ${describe(v)}`);
}

function decOrNull(v: unknown, url: string, base: string, i: number, key: string): string | null {
  if (v === undefined || v === null) return null;
  return dec(v, url, base, i, key);
}

function str(v: unknown, url: string, base: string, i: number, key: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return fail(url, base, i, key, `expected a string, got ${describe(v)}`);
}

function strOrNull(v: unknown, url: string, base: string, i: number, key: string): string | null {
  if (v === undefined || v === null) return null;
  return str(v, url, base, i, key);
}

/** Hashes, addresses, hex data: lowercase. */
function hex(v: unknown, url: string, base: string, i: number, key: string): string {
  if (typeof v === 'string') return v.toLowerCase();
  return fail(url, base, i, key, `expected a hex string, got ${describe(v)}`);
}

/** Null also for "" and the NUL padding of an empty ClickHouse FixedString (the indexer's to_address, function_selector). */
function hexOrNull(v: unknown, url: string, base: string, i: number, key: string): string | null {
  if (v === undefined || v === null || v === '' || (typeof v === 'string' && v.charCodeAt(0) === 0)) return null;
  return hex(v, url, base, i, key);
}

function boolOrNull(v: unknown, url: string, base: string, i: number, key: string): boolean | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v;
  return fail(url, base, i, key, `expected a boolean, got ${describe(v)}`);
}

function objOrNull(v: unknown, url: string, base: string, i: number, key: string): Obj | null {
  if (v === undefined || v === null) return null;
  if (isObj(v)) return v;
  return fail(url, base, i, key, `expected an object, got ${describe(v)}`);
}

/** An array; Go servers send `null` for an empty one. */
function arrayOrEmpty(v: unknown, url: string, base: string, i: number, key: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  return fail(url, base, i, key, `expected an array, got ${describe(v)}`);
}

function record(v: unknown, url: string, base: string, i: number): Obj {
  if (isObj(v)) return v;
  return fail(url, base, i, '', `expected an object, got ${describe(v)}`);
}

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

// ---------------------------------------------------------------------------------------------
// Explorer NFT collections (Blockscout v2 shapes; newer Blockscout renamed a few keys)

function tagRefs(v: unknown, url: string, base: string, i: number, key: string): NftTagRef[] {
  const raw = arrayOrEmpty(v, url, base, i, key);
  const p = pathOf(base, i, key);
  const out = new Array<NftTagRef>(raw.length);
  for (let j = 0; j < raw.length; j++) {
    const t = record(raw[j], url, p, j);
    out[j] = {
      address_hash: hexOrNull(t.address_hash, url, p, j, 'address_hash'),
      display_name: strOrNull(t.display_name, url, p, j, 'display_name'),
      label: strOrNull(t.label, url, p, j, 'label'),
    };
  }
  return out;
}

function owner(v: unknown, url: string, base: string, i: number): NftOwner | null {
  if (v === undefined || v === null) return null;
  const p = pathOf(base, i, 'owner');
  const o = record(v, url, p, -1);
  const watch = arrayOrEmpty(o.watchlist_names, url, p, -1, 'watchlist_names');
  const watchlist_names = new Array<{ display_name: string | null; label: string | null }>(watch.length);
  for (let j = 0; j < watch.length; j++) {
    const w = record(watch[j], url, `${p}.watchlist_names`, j);
    watchlist_names[j] = {
      display_name: strOrNull(w.display_name, url, `${p}.watchlist_names`, j, 'display_name'),
      label: strOrNull(w.label, url, `${p}.watchlist_names`, j, 'label'),
    };
  }
  return {
    hash: hex(o.hash ?? o.address_hash, url, p, -1, 'hash'),
    implementation_name: strOrNull(o.implementation_name, url, p, -1, 'implementation_name'),
    name: strOrNull(o.name, url, p, -1, 'name'),
    is_contract: boolOrNull(o.is_contract, url, p, -1, 'is_contract'),
    is_verified: boolOrNull(o.is_verified, url, p, -1, 'is_verified'),
    ens_domain_name: strOrNull(o.ens_domain_name, url, p, -1, 'ens_domain_name'),
    private_tags: tagRefs(o.private_tags, url, p, -1, 'private_tags'),
    public_tags: tagRefs(o.public_tags, url, p, -1, 'public_tags'),
    watchlist_names,
    metadata: objOrNull(o.metadata, url, p, -1, 'metadata'),
  };
}

function nftToken(v: unknown, url: string, base: string): NftToken {
  const t = record(v, url, base, -1);
  return {
    circulating_market_cap: strOrNull(t.circulating_market_cap, url, base, -1, 'circulating_market_cap'),
    icon_url: strOrNull(t.icon_url, url, base, -1, 'icon_url'),
    name: strOrNull(t.name, url, base, -1, 'name'),
    decimals: strOrNull(t.decimals, url, base, -1, 'decimals'),
    symbol: strOrNull(t.symbol, url, base, -1, 'symbol'),
    address: hex(t.address ?? t.address_hash, url, base, -1, 'address'),
    type: str(t.type, url, base, -1, 'type'),
    holders: strOrNull(t.holders ?? t.holders_count, url, base, -1, 'holders'),
    exchange_rate: strOrNull(t.exchange_rate, url, base, -1, 'exchange_rate'),
    total_supply: strOrNull(t.total_supply, url, base, -1, 'total_supply'),
  };
}

function nftInstance(v: unknown, url: string, base: string, i: number): NftTokenInstance {
  const r = record(v, url, base, i);
  return {
    is_unique: boolOrNull(r.is_unique, url, base, i, 'is_unique'),
    id: str(r.id, url, base, i, 'id'),
    owner: owner(r.owner, url, base, i),
    token_type: strOrNull(r.token_type, url, base, i, 'token_type'),
    value: strOrNull(r.value, url, base, i, 'value'),
    holder_address_hash: hexOrNull(r.holder_address_hash, url, base, i, 'holder_address_hash'),
    image_url: strOrNull(r.image_url, url, base, i, 'image_url'),
    animation_url: strOrNull(r.animation_url, url, base, i, 'animation_url'),
    external_app_url: strOrNull(r.external_app_url, url, base, i, 'external_app_url'),
    metadata: objOrNull(r.metadata, url, base, i, 'metadata'),
    token: r.token === undefined ? null : r.token,
  };
}

export function normaliseNftCollectionsPage(json: unknown, url: string): NftCollectionsPage {
  if (!isObj(json)) return fail(url, '$', -1, '', `expected an object, got ${describe(json)}`);
  const rawItems = json.items;
  if (!Array.isArray(rawItems)) return fail(url, '$', -1, 'items', `expected an array, got ${describe(rawItems)}`);
  const items = new Array<NftCollection>(rawItems.length);
  for (let i = 0; i < rawItems.length; i++) {
    const r = record(rawItems[i], url, '$.items', i);
    const p = `$.items[${i}]`;
    const rawInstances = arrayOrEmpty(r.token_instances, url, p, -1, 'token_instances');
    const instances = new Array<NftTokenInstance>(rawInstances.length);
    for (let j = 0; j < rawInstances.length; j++) instances[j] = nftInstance(rawInstances[j], url, `${p}.token_instances`, j);
    items[i] = {
      token: nftToken(r.token, url, `${p}.token`),
      token_instances: instances,
      amount: str(r.amount, url, p, -1, 'amount'),
    };
  }
  return { items, next_page_params: nextPageParams(json, url) };
}

/** A page of Blockscout's ungrouped addresses/<hash>/nft route: instances, each with its `token`. */
export function normaliseNftInstancesPage(json: unknown, url: string): NftInstancesPage {
  if (!isObj(json)) return fail(url, '$', -1, '', `expected an object, got ${describe(json)}`);
  const rawItems = json.items;
  if (!Array.isArray(rawItems)) return fail(url, '$', -1, 'items', `expected an array, got ${describe(rawItems)}`);
  const items = new Array<NftListedInstance>(rawItems.length);
  for (let i = 0; i < rawItems.length; i++) {
    const r = record(rawItems[i], url, '$.items', i);
    items[i] = { token: nftToken(r.token, url, `$.items[${i}].token`), instance: { ...nftInstance(r, url, '$.items', i), token: null } };
  }
  return { items, next_page_params: nextPageParams(json, url) };
}

function nextPageParams(json: Obj, url: string): Record<string, string | number> | null {
  if (!('next_page_params' in json)) return fail(url, '$', -1, 'next_page_params', 'expected an object or null, got missing');
  const next = json.next_page_params;
  if (next === null) return null;
  if (!isObj(next)) return fail(url, '$', -1, 'next_page_params', `expected an object or null, got ${describe(next)}`);
  const out: Record<string, string | number> = {};
  for (const key in next) {
    const value = next[key];
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
    else if (typeof value === 'boolean') out[key] = String(value);
    else if (value === null || value === undefined)
      continue; // not sent back, as the explorer's own client does
    else return fail(url, '$.next_page_params', -1, key, `expected a string or number, got ${describe(value)}`);
  }
  return out;
}
