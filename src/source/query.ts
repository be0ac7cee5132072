/**
 * Request building for the read interface (its published contract): pure, no I/O.
 * Every builder validates its input against the contract and throws RequestValidationError naming
 * the parameter, so a bad request is never sent. Paths are relative to the configured base URL
 * (which carries the '/insights/v1' or '/v1' prefix), query strings are in a canonical order.
 */
import { InvalidSignatureError, parseEventSignature, type ParsedEventSignature } from '../abi/event-signature.js';
import type { DecodeRequestBody } from './records.js';
import { RequestValidationError } from './errors.js';
import { EVENT_FILTERS, filterValue, TRANSACTION_FILTERS, type Filters, type FilterSpec } from './query-filters.js';
import { ADDRESS_RE, HASH32_RE, HEX_RE, integerInRange, show, validateAddress, validateHex } from './request-values.js';

export {
  EVENT_FILTER_FIELDS,
  EVENT_FILTERS,
  FILTER_OPERATORS,
  TRANSACTION_FILTER_FIELDS,
  TRANSACTION_FILTERS,
  type EventFilterField,
  type FilterKind,
  type FilterOperator,
  type Filters,
  type FilterSpec,
  type TransactionFilterField,
} from './query-filters.js';
export { checksumMismatch, isAddress, validateAddress } from './request-values.js';

export interface ListQuery {
  chainIds: number[];
  filters?: Filters;
  sortBy?: 'block_number';
  sortOrder?: 'asc' | 'desc';
  groupBy?: string[];
  aggregate?: string[];
  decode?: boolean;
  limit?: number;
  page?: number;
}

/** The most chain ids the contract lets one request name: the bound of source.chain_ids_per_request and of a query's chain ids. */
export const MAX_CHAIN_IDS = 55;

/**
 * Chain ids in request-sized batches of at most `most` each (the run's chain ids per request:
 * InsightClient.chainIdsPerRequest, or source.chain_ids_per_request for an estimate), in the given order.
 */
export function chainIdBatches(chainIds: readonly number[], most: number): number[][] {
  if (!Number.isInteger(most) || most < 1 || most > MAX_CHAIN_IDS) {
    throw new RequestValidationError('chain_ids_per_request', `expected 1 to ${MAX_CHAIN_IDS} chain ids per request, got ${most}`);
  }
  const batches: number[][] = [];
  for (let i = 0; i < chainIds.length; i += most) batches.push(chainIds.slice(i, i + most));
  return batches;
}

/** The requests `chains` chain ids take at `most` a request. */
export function chainRequests(chains: number, most: number): number {
  return Math.ceil(chains / most);
}
export const MAX_LIMIT = 1000;
export const MAX_PAGE = 20;
export const MAX_PAGE_AGGREGATED = 500;
export const NFT_TOKEN_TYPES = ['ERC-721', 'ERC-404', 'ERC-1155'] as const;
export type NftTokenType = (typeof NFT_TOKEN_TYPES)[number];

// ---------------------------------------------------------------------------------------------
// Small validators

/** ENS-style names: labels of letters/digits/_/- separated by dots, at least one dot. */
const WALLET_NAME_RE = /^[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+$/u;
/** A group_by entry: a column, or a function of it (`toDate(block_timestamp)`), with an optional `as alias`. */
const GROUP_BY_RE = /^[A-Za-z_][A-Za-z0-9_]*(?:\([A-Za-z0-9_(),\s*]*\))?(?:\s+as\s+[A-Za-z_][A-Za-z0-9_]*)?$/i;
// eslint-disable-next-line no-control-regex -- control characters are what this pattern rejects
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

export function validateChainIds(parameter: string, chainIds: unknown, required: boolean): number[] {
  if (chainIds === undefined && !required) return [];
  if (!Array.isArray(chainIds)) throw new RequestValidationError(parameter, 'expected an array of chain ids');
  if (chainIds.length === 0 || chainIds.length > MAX_CHAIN_IDS) {
    throw new RequestValidationError(parameter, `expected 1 to ${MAX_CHAIN_IDS} chain ids, got ${chainIds.length}`, {
      hint: chainIds.length > MAX_CHAIN_IDS ? 'Split the chains over several requests.' : undefined,
    });
  }
  const seen = new Set<number>();
  for (const id of chainIds) {
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
      throw new RequestValidationError(parameter, `chain ids are positive integers, got ${show(id)}`);
    }
    if (seen.has(id)) throw new RequestValidationError(parameter, `chain id ${id} is listed twice`);
    seen.add(id);
  }
  return chainIds as number[];
}

// ---------------------------------------------------------------------------------------------
// Query strings

type QueryPairs = [string, string][];

function queryString(pairs: QueryPairs): string {
  if (pairs.length === 0) return '';
  let out = '';
  for (const [key, value] of pairs) {
    out += `${out ? '&' : '?'}${encodeURIComponent(key)}=${encodeURIComponent(value)}`;
  }
  return out;
}

function chainPairs(chainIds: number[]): QueryPairs {
  return chainIds.map((id) => ['chain_id', String(id)]);
}

/** Query parameters of operations 1 and 2, validated, in canonical order. */
export function listQueryPairs(q: ListQuery, allowed: ReadonlyMap<string, FilterSpec>): QueryPairs {
  if (q === null || typeof q !== 'object') throw new RequestValidationError('query', 'expected a query object');
  const pairs = chainPairs(validateChainIds('chainIds', q.chainIds, true));

  const filters = q.filters ?? {};
  if (filters === null || typeof filters !== 'object') throw new RequestValidationError('filters', 'expected an object');
  for (const name of Object.keys(filters)) {
    if (!allowed.has(name)) {
      const known = [...allowed.keys()].join(', ');
      throw new RequestValidationError(`filters.${name}`, 'unknown filter for this operation', {
        hint: `Known filters: ${known}`,
      });
    }
  }
  // Canonical order (the contract's table order), whatever order the caller used.
  for (const spec of allowed.values()) {
    if (!Object.hasOwn(filters, spec.name)) continue;
    const value = filters[spec.name];
    if (value === undefined) continue;
    pairs.push([spec.name, filterValue(spec, value)]);
  }

  if (q.sortBy !== undefined) {
    if (q.sortBy !== 'block_number') throw new RequestValidationError('sortBy', `only 'block_number' is allowed, got ${show(q.sortBy)}`);
    pairs.push(['sort_by', q.sortBy]);
  }
  if (q.sortOrder !== undefined) {
    if (q.sortOrder !== 'asc' && q.sortOrder !== 'desc') {
      throw new RequestValidationError('sortOrder', `expected 'asc' or 'desc', got ${show(q.sortOrder)}`);
    }
    pairs.push(['sort_order', q.sortOrder]);
  }

  const groupBy = stringList('groupBy', q.groupBy);
  for (const field of groupBy) {
    if (!GROUP_BY_RE.test(field)) {
      throw new RequestValidationError(
        'groupBy',
        `expected a column name or an expression such as 'toDate(block_timestamp) as day', got ${show(field)}`,
      );
    }
    pairs.push(['group_by', field]);
  }
  const aggregate = stringList('aggregate', q.aggregate);
  for (const expr of aggregate) {
    if (expr.trim() === '' || expr.length > 256 || CONTROL_RE.test(expr)) {
      throw new RequestValidationError('aggregate', `expected an expression such as 'count() as count', got ${show(expr)}`);
    }
    pairs.push(['aggregate', expr]);
  }

  if (q.decode !== undefined) {
    if (typeof q.decode !== 'boolean') throw new RequestValidationError('decode', `expected a boolean, got ${show(q.decode)}`);
    if (q.decode) pairs.push(['decode', 'true']);
  }
  if (q.limit !== undefined) pairs.push(['limit', String(integerInRange('limit', q.limit, 1, MAX_LIMIT))]);
  if (q.page !== undefined) {
    const aggregated = groupBy.length > 0 || aggregate.length > 0;
    const max = aggregated ? MAX_PAGE_AGGREGATED : MAX_PAGE;
    pairs.push(['page', String(integerInRange('page', q.page, 0, max))]);
  }
  return pairs;
}

function stringList(parameter: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new RequestValidationError(parameter, 'expected an array of strings');
  }
  return value as string[];
}

/** True when the query asks for group_by/aggregate rows instead of records. */
export function isAggregateQuery(q: ListQuery): boolean {
  return (q.groupBy?.length ?? 0) > 0 || (q.aggregate?.length ?? 0) > 0;
}

// ---------------------------------------------------------------------------------------------
// Event signatures

/**
 * The event signature of a request, parsed by the one parser (src/abi/event-signature.ts): what is
 * sent is its `human` form; the server filters on its topic0 and echoes it in meta.signature.
 * A signature the parser refuses is a RequestValidationError naming the parameter.
 */
export function validateEventSignature(signature: unknown, parameter = 'signature'): ParsedEventSignature {
  if (typeof signature !== 'string' || signature.trim() === '') {
    throw new RequestValidationError(
      parameter,
      `expected an event signature such as 'Transfer(address indexed from, address indexed to, uint256 value)', got ${show(signature)}`,
    );
  }
  try {
    return parseEventSignature(signature.replace(/\s+/g, ' '));
  } catch (err) {
    if (err instanceof InvalidSignatureError) throw new RequestValidationError(parameter, err.problem, { hint: err.hint, cause: err });
    throw err;
  }
}

export function walletTransactionsPath(wallet: string, q: ListQuery): string {
  let segment: string;
  if (typeof wallet === 'string' && ADDRESS_RE.test(wallet)) {
    segment = wallet.toLowerCase();
  } else if (typeof wallet === 'string' && !wallet.startsWith('0x') && wallet.length <= 255 && WALLET_NAME_RE.test(wallet)) {
    segment = wallet;
  } else {
    throw new RequestValidationError(
      'wallet',
      `expected an address (0x + 40 hex digits) or a name such as 'vitalik.eth', got ${show(wallet)}`,
    );
  }
  const query = queryString(listQueryPairs(q, TRANSACTION_FILTERS));
  return `/wallets/${encodeURIComponent(segment)}/transactions${query}`;
}

/** Operation 2. */
export function contractEventsPath(contract: string, signature: string, q: ListQuery): string {
  const address = validateAddress('contract', contract);
  const parsed = validateEventSignature(signature);
  const query = queryString(listQueryPairs(q, EVENT_FILTERS));
  return `/events/${address}/${encodeURIComponent(parsed.human)}${query}`;
}

/** Operation 3. `input` is a block number, hash, address, signature, selector or name. */
export function resolvePath(input: string, opts: { chainIds?: number[] } = {}): string {
  if (typeof input !== 'string' || input.trim() === '' || input !== input.trim() || input.length > 512 || CONTROL_RE.test(input)) {
    throw new RequestValidationError('input', `expected a block number, hash, address, signature, selector or name, got ${show(input)}`);
  }
  if (input.startsWith('0x')) {
    const ok = HEX_RE.test(input) && (input.length === 10 || input.length === 42 || input.length === 66);
    if (!ok) {
      throw new RequestValidationError('input', `a 0x input must be a selector (10 chars), address (42) or hash (66), got ${show(input)}`);
    }
  }
  const segment = input.startsWith('0x') ? input.toLowerCase() : input;
  const query = queryString(chainPairs(validateChainIds('chainIds', opts.chainIds, false)));
  return `/resolve/${encodeURIComponent(segment)}${query}`;
}

/** Operation 4 (POST); the body is checked by validateDecodeBody. */
export function decodePath(contract: string, opts: { chainIds?: number[] } = {}): string {
  const address = validateAddress('contract', contract);
  const query = queryString(chainPairs(validateChainIds('chainIds', opts.chainIds, false)));
  return `/decode/${address}${query}`;
}

/** The decode request body, checked and with hex lowercased. */
export function validateDecodeBody(body: DecodeRequestBody): DecodeRequestBody {
  if (body === null || typeof body !== 'object') throw new RequestValidationError('body', 'expected { transactions?, logs? }');
  const out: DecodeRequestBody = {};
  if (body.transactions !== undefined) {
    if (!Array.isArray(body.transactions)) throw new RequestValidationError('body.transactions', 'expected an array');
    out.transactions = body.transactions.map((tx, i) => ({
      data: validateHex(`body.transactions[${i}].data`, tx?.data, HEX_RE, 'hex input data (0x...)'),
    }));
  }
  if (body.logs !== undefined) {
    if (!Array.isArray(body.logs)) throw new RequestValidationError('body.logs', 'expected an array');
    out.logs = body.logs.map((log, i) => {
      const topics = log?.topics;
      if (!Array.isArray(topics) || topics.length > 4) {
        throw new RequestValidationError(`body.logs[${i}].topics`, 'expected an array of at most 4 topics');
      }
      return {
        topics: topics.map((t, j) => validateHex(`body.logs[${i}].topics[${j}]`, t, HASH32_RE, 'a 32-byte topic (0x + 64 hex digits)')),
        data: validateHex(`body.logs[${i}].data`, log.data, HEX_RE, 'hex log data (0x...)'),
      };
    });
  }
  if (!out.transactions?.length && !out.logs?.length) {
    throw new RequestValidationError('body', 'nothing to decode: give transactions and/or logs');
  }
  return out;
}

/**
 * Operation 5, relative to the explorer base URL ('.../api/v2'). `pageParams` is the previous
 * page's next_page_params, every key sent back as a query parameter.
 */
export function nftCollectionsPath(
  address: string,
  opts: { types?: NftTokenType[]; pageParams?: Record<string, string | number>; chainIds?: number[] } = {},
): string {
  return `/addresses/${validateAddress('address', address)}/nft/collections${nftQuery(opts)}`;
}

/**
 * Blockscout's ungrouped addresses/<hash>/nft route (every token instance, paged like operation
 * 5): not in the contract, served by explorers that pass Blockscout's routes through.
 */
export function nftInstancesPath(
  address: string,
  opts: { types?: NftTokenType[]; pageParams?: Record<string, string | number>; chainIds?: number[] } = {},
): string {
  return `/addresses/${validateAddress('address', address)}/nft${nftQuery(opts)}`;
}

function nftQuery(opts: { types?: NftTokenType[]; pageParams?: Record<string, string | number>; chainIds?: number[] }): string {
  const pageParams = opts.pageParams ?? {};
  if (pageParams === null || typeof pageParams !== 'object') throw new RequestValidationError('pageParams', 'expected an object');
  // The contract shows no chain parameter here (an explorer serves one chain); chain_id is sent
  // only when asked for, for explorer areas that serve several chains (the sandbox does).
  const chainIds = validateChainIds('chainIds', opts.chainIds, false);
  let query = Object.hasOwn(pageParams, 'chain_id') ? '' : queryString(chainPairs(chainIds));
  if (opts.types !== undefined && !Object.hasOwn(pageParams, 'type')) {
    if (!Array.isArray(opts.types) || opts.types.length === 0) throw new RequestValidationError('types', 'expected a non-empty array');
    const seen = new Set<string>();
    for (const t of opts.types) {
      if (!(NFT_TOKEN_TYPES as readonly string[]).includes(t)) {
        throw new RequestValidationError('types', `expected one of ${NFT_TOKEN_TYPES.join(', ')}, got ${show(t)}`);
      }
      if (seen.has(t)) throw new RequestValidationError('types', `${t} is listed twice`);
      seen.add(t);
    }
    // Comma-separated list, sent with literal commas as the explorer's own client does.
    query += `${query ? '&' : '?'}type=${opts.types.map(encodeURIComponent).join(',')}`;
  }
  for (const [key, value] of Object.entries(pageParams)) {
    if (key === '' || (typeof value !== 'string' && typeof value !== 'number')) {
      throw new RequestValidationError(`pageParams.${key}`, `expected a string or number, got ${show(value)}`);
    }
    query += `${query ? '&' : '?'}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
  }
  return query;
}
