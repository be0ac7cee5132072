/**
 * A list query's filters: which exist for operations 1 and 2 (filter_<field><operator>), of what
 * kind each is, and how a value is checked and sent (an exact decimal string for a number).
 */
import type { EVENT_QUERY_FIELDS, FieldName, TRANSACTION_QUERY_FIELDS } from '../columns/record-fields.js';
import { RequestValidationError } from './errors.js';
import { HASH32_RE, SELECTOR_RE, show, validateHex } from './request-values.js';

export type FilterOperator = '' | '_gte' | '_gt' | '_lte' | '_lt';
export const FILTER_OPERATORS: readonly FilterOperator[] = ['', '_gte', '_gt', '_lte', '_lt'];

export const TRANSACTION_FILTER_FIELDS = [
  'block_number',
  'block_hash',
  'block_timestamp',
  'transaction_index',
  'hash',
  'value',
  'gas_price',
  'gas',
  'function_selector',
] as const satisfies readonly FieldName<typeof TRANSACTION_QUERY_FIELDS>[];
export type TransactionFilterField = (typeof TRANSACTION_FILTER_FIELDS)[number];

export const EVENT_FILTER_FIELDS = [
  'block_number',
  'block_hash',
  'block_timestamp',
  'transaction_index',
  'transaction_hash',
  'log_index',
  'topic_1',
  'topic_2',
  'topic_3',
] as const satisfies readonly FieldName<typeof EVENT_QUERY_FIELDS>[];
export type EventFilterField = (typeof EVENT_FILTER_FIELDS)[number];

/** Keys are full parameter names: 'filter_block_number_gte', 'filter_hash', ... */
export type Filters = Record<string, string | number | bigint>;

/**
 * How a filter value is checked and sent. Range filters are numbers on the wire; uint256 columns
 * (value, gas_price) are compared as uint256 by the server, so every number goes out as an exact
 * decimal string. Hash-like filters only exist as equality filters.
 */
export type FilterKind = 'uint64' | 'uint256' | 'hash32' | 'selector';

const FIELD_KINDS: Record<string, FilterKind> = {
  block_number: 'uint64',
  block_timestamp: 'uint64',
  transaction_index: 'uint64',
  log_index: 'uint64',
  gas: 'uint64',
  value: 'uint256',
  gas_price: 'uint256',
  block_hash: 'hash32',
  hash: 'hash32',
  transaction_hash: 'hash32',
  topic_1: 'hash32',
  topic_2: 'hash32',
  topic_3: 'hash32',
  function_selector: 'selector',
};

const UINT64_MAX = (1n << 64n) - 1n;
const UINT256_MAX = (1n << 256n) - 1n;

export interface FilterSpec {
  name: string;
  field: string;
  operator: FilterOperator;
  kind: FilterKind;
}

function filterSpecs(fields: readonly string[]): Map<string, FilterSpec> {
  const specs = new Map<string, FilterSpec>();
  for (const field of fields) {
    const kind = FIELD_KINDS[field]!;
    const ops: readonly FilterOperator[] = kind === 'uint64' || kind === 'uint256' ? FILTER_OPERATORS : [''];
    for (const operator of ops) {
      const name = `filter_${field}${operator}`;
      specs.set(name, { name, field, operator, kind });
    }
  }
  return specs;
}

/** Every filter parameter of operation 1, in the order they are sent. */
export const TRANSACTION_FILTERS: ReadonlyMap<string, FilterSpec> = filterSpecs(TRANSACTION_FILTER_FIELDS);
/** Every filter parameter of operation 2, in the order they are sent. */
export const EVENT_FILTERS: ReadonlyMap<string, FilterSpec> = filterSpecs(EVENT_FILTER_FIELDS);

const DECIMAL_RE = /^(?:0|[1-9][0-9]*)$/;

/** A non-negative integer as an exact decimal string, at most `max`. */
function decimalValue(parameter: string, value: unknown, max: bigint): string {
  let big: bigint;
  if (typeof value === 'bigint') {
    big = value;
  } else if (typeof value === 'number') {
    if (!Number.isInteger(value)) {
      throw new RequestValidationError(parameter, `expected a non-negative integer, got ${show(value)}`);
    }
    if (!Number.isSafeInteger(value)) {
      throw new RequestValidationError(parameter, `${show(value)} is beyond 2^53 and has lost precision as a JS number`, {
        hint: 'Pass large numbers as a bigint or a decimal string.',
      });
    }
    big = BigInt(value);
  } else if (typeof value === 'string') {
    if (!DECIMAL_RE.test(value)) {
      throw new RequestValidationError(parameter, `expected a non-negative decimal integer string, got ${show(value)}`);
    }
    big = BigInt(value);
  } else {
    throw new RequestValidationError(parameter, `expected a number, bigint or decimal string, got ${show(value)}`);
  }
  if (big < 0n) throw new RequestValidationError(parameter, `must not be negative, got ${show(value)}`);
  if (big > max) throw new RequestValidationError(parameter, `${big} is larger than ${max === UINT64_MAX ? 'uint64' : 'uint256'}`);
  return big.toString();
}

export function filterValue(spec: FilterSpec, value: unknown): string {
  const parameter = `filters.${spec.name}`;
  switch (spec.kind) {
    case 'uint64':
      return decimalValue(parameter, value, UINT64_MAX);
    case 'uint256':
      return decimalValue(parameter, value, UINT256_MAX);
    case 'hash32':
      return validateHex(parameter, value, HASH32_RE, 'a 32-byte hex value (0x + 64 hex digits; left-pad addresses in topics)');
    case 'selector':
      return validateHex(parameter, value, SELECTOR_RE, 'a 4-byte function selector (0x + 8 hex digits)');
  }
}
