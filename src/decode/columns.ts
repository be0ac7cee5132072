import type { AbiEvent, AbiFunction, AbiParameter } from 'viem';
import { column, type Column, type ColumnType } from '../columns/columns.js';
import { canonicalType, isHashedWhenIndexed, isIndexed, typeInfo } from '../abi/abi-types.js';

/** `decode_status`: `ok`, `no_abi` or `error: <short reason>` (transactions also `no_calldata`). */
export const DECODE_STATUS_COLUMN = column(
  'decode_status',
  'string',
  "How the row was decoded: 'ok', 'no_abi' (no definition to decode it with) or 'error: <reason>'; arg columns are null unless 'ok'",
  false,
);

/**
 * The columns a transaction decoder adds to each row (decode: true): a constant, so a run knows its
 * tables' columns without building a decoder (which loads viem).
 */
export const TRANSACTION_DECODE_COLUMNS = [
  column('decoded_function_name', 'string', 'Name of the called function (null unless decode_status is ok)'),
  column(
    'decoded_signature',
    'string',
    "Canonical signature of the called function, e.g. transfer(address,uint256) (the service's text when its types are unknown)",
  ),
  column(
    'decoded_inputs_json',
    'json',
    'Call arguments as a JSON object keyed by parameter name (unnamed: position) in ABI order; integers as decimal strings, bytes and addresses as lowercase hex',
  ),
  { ...DECODE_STATUS_COLUMN, description: "'ok', 'no_abi' (no ABI for the selector), 'no_calldata' (plain transfer) or 'error: <reason>'" },
] as const;

/** `tokenId` -> `token_id`, `_from` -> `from`, `ERC20Token` -> `erc20_token`; only [a-z0-9_]. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * Column names for a parameter list, in ABI order: `arg_<snake_name>`, unnamed (or unusable)
 * names -> `arg_<index>`; a name already taken gets `_2`, `_3`, ... (first come, first served).
 */
export function argColumnNames(params: readonly AbiParameter[]): string[] {
  const used = new Set<string>();
  return params.map((param, index) => {
    const base = `arg_${snakeCase(param.name ?? '') || String(index)}`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
}

/** Column type of a decoded parameter (see decoded-values.ts for the values). */
export function argColumnType(param: AbiParameter): ColumnType {
  if (isIndexed(param) && isHashedWhenIndexed(param)) return 'string';
  const info = typeInfo(param);
  switch (info.kind) {
    case 'int':
      // uint256 columns hold 0..2^256-1; a signed int is an exact decimal string that may be negative.
      return info.signed ? 'string' : 'uint256';
    case 'bool':
      return 'bool';
    case 'array':
    case 'tuple':
      return 'json';
    default:
      return 'string';
  }
}

function describe(param: AbiParameter, owner: string): string {
  const label = `${JSON.stringify(param.name ?? '')} (${canonicalType(param)}) of ${owner}`;
  if (isIndexed(param) && isHashedWhenIndexed(param)) {
    return `Indexed parameter ${label}: keccak256 hash of the value (the log holds only the hash), lowercase hex`;
  }
  const info = typeInfo(param);
  const what =
    info.kind === 'int'
      ? 'exact decimal string'
      : info.kind === 'address' || info.kind === 'bytes' || info.kind === 'fixedBytes'
        ? 'lowercase 0x hex'
        : info.kind === 'array' || info.kind === 'tuple'
          ? 'JSON text (integers as decimal strings, bytes and addresses as lowercase hex)'
          : info.kind;
  return `${isIndexed(param) ? 'Indexed parameter' : 'Parameter'} ${label}: ${what}`;
}

function argColumns(params: readonly AbiParameter[], owner: string): Column[] {
  const names = argColumnNames(params);
  return params.map((param, i) => column(names[i] as string, argColumnType(param), describe(param, owner)));
}

/** One nullable column per event parameter, in ABI order (a pure function of the event). */
export function eventArgColumns(event: AbiEvent): Column[] {
  return argColumns(event.inputs, `event ${event.name}`);
}

/** The columns an event's decoder adds to each row: its arg_* columns, then decode_status. */
export function eventDecodeColumns(event: AbiEvent): Column[] {
  return [...eventArgColumns(event), DECODE_STATUS_COLUMN];
}

/** One nullable column per function input, in ABI order (a pure function of the function). */
export function functionArgColumns(fn: AbiFunction): Column[] {
  return argColumns(fn.inputs, `function ${fn.name}`);
}
