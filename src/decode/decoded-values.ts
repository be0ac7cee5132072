import type { AbiParameter } from 'viem';
import type { RowValue } from '../columns/columns.js';
import { InsightExportError } from '../errors.js';
import { isHashedWhenIndexed, isIndexed, typeInfo } from '../abi/abi-types.js';

/**
 * One canonical form for decoded values, whichever decoder produced them (viem locally, or the
 * service's `decoded` object, whose encodings vary: thirdweb-dev/insight internal/common/transaction.go
 * and internal/common/log.go at acdb2eb, the last commit with the API handlers):
 *  - uintN / intN: exact decimal string, no leading zeros, `-` for negatives
 *    (from bigint, safe-integer JSON numbers, decimal strings or 0x hex quantities);
 *  - address: lowercase 0x hex (from checksummed or lowercase hex, 32-byte padded words, bytes);
 *  - bytes / bytesN: lowercase 0x hex (from hex, base64, arrays of byte numbers, Buffer JSON);
 *  - bool: boolean; string: string;
 *  - arrays and tuples: JSON text of the same rules applied inside (tuples as objects keyed by
 *    component name when every component is named, else arrays);
 *  - indexed string/bytes/array/tuple parameters: the topic (keccak256 hash), lowercase hex.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A value that cannot be what the ABI type says. `reason` is short and never contains the value. */
export class DecodeValueError extends InsightExportError {
  override name = 'DecodeValueError';
  readonly reason: string;
  constructor(reason: string, path: string, value: unknown) {
    super(`Cannot normalise decoded value: ${reason}`, {
      details: `${path || 'value'} = ${preview(value)}`,
      hint: 'The row keeps decode_status "error: ..." and null arg columns; check the event signature or ABI.',
    });
    this.reason = reason;
  }
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

type Normaliser = (value: unknown, path: string) => JsonValue;

const DECIMAL_RE = /^\s*([+-]?)0*(\d+)\s*$/;
const HEX_QUANTITY_RE = /^\s*(-?)0[xX]([0-9a-fA-F]+)\s*$/;
const HEX_BODY_RE = /^[0-9a-fA-F]*$/;
const ADDRESS_RE = /^0[xX][0-9a-fA-F]{40}$/;
const BARE_ADDRESS_RE = /^[0-9a-fA-F]{40}$/;
const BASE64_RE = /^[A-Za-z0-9+/_-]*={0,2}$/;
const PADDED_ADDRESS_PREFIX = '0x000000000000000000000000';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Bytes in any shape the service was seen to send, as lowercase 0x hex; null when not bytes.
 * Base64 text can itself begin with "0x" or "0X" (bytes 0xd0-0xd3 then 0x1_ or 0x7_, e.g.
 * "0XAAAA==" for 0xd1700000): a "0x" string is hex when its body is all hex digits (and then
 * must be whole bytes), base64 only when it cannot be hex at all, so malformed hex is never read
 * again as base64 of another length.
 */
export function bytesToHex(value: unknown): string | null {
  if (typeof value === 'string') return looksHex(value) ? hexText(value) : base64Text(value);
  if (value instanceof Uint8Array) {
    return `0x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  }
  if (Array.isArray(value)) {
    for (const b of value) if (!(Number.isInteger(b) && (b as number) >= 0 && (b as number) <= 255)) return null;
    return `0x${Buffer.from(value as number[]).toString('hex')}`;
  }
  if (isRecord(value) && value.type === 'Buffer' && Array.isArray(value.data)) return bytesToHex(value.data);
  return null;
}

function looksHex(value: string): boolean {
  return (value.startsWith('0x') || value.startsWith('0X')) && HEX_BODY_RE.test(value.slice(2));
}

function hexText(value: string): string | null {
  const body = value.slice(2);
  return body.length % 2 === 0 ? `0x${body.toLowerCase()}` : null;
}

function base64Text(value: string): string | null {
  const padded = value.endsWith('=');
  if (!BASE64_RE.test(value) || (padded ? value.length % 4 !== 0 : value.length % 4 === 1)) return null;
  return `0x${Buffer.from(value, 'base64').toString('hex')}`;
}

function intNormaliser(bits: number, signed: boolean, type: string): Normaliser {
  const bound = signed ? 2n ** BigInt(bits - 1) : 2n ** BigInt(bits);
  const max = bound - 1n;
  const min = signed ? -bound : 0n;
  // Fewer digits than the bound has means in range without BigInt arithmetic.
  const safeDigits = bound.toString().length;
  return (value, path) => {
    let negative: boolean;
    let digits: string;
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) {
        throw new DecodeValueError(
          Number.isInteger(value) ? `${type} number beyond 2^53 (precision lost)` : `not an integer for ${type}`,
          path,
          value,
        );
      }
      negative = value < 0;
      digits = String(Math.abs(value));
    } else if (typeof value === 'bigint') {
      negative = value < 0n;
      digits = (negative ? -value : value).toString();
    } else if (typeof value === 'string') {
      const dec = DECIMAL_RE.exec(value);
      if (dec) {
        negative = dec[1] === '-';
        digits = dec[2] as string;
      } else {
        const hex = HEX_QUANTITY_RE.exec(value);
        if (!hex) throw new DecodeValueError(`not an integer for ${type}`, path, value);
        negative = hex[1] === '-';
        digits = BigInt(`0x${hex[2]}`).toString();
      }
    } else {
      throw new DecodeValueError(`not an integer for ${type}`, path, value);
    }
    if (digits === '0') return '0';
    if (negative && !signed) throw new DecodeValueError(`negative value for ${type}`, path, value);
    if (digits.length >= safeDigits) {
      const big = negative ? -BigInt(digits) : BigInt(digits);
      if (big > max || big < min) throw new DecodeValueError(`out of range for ${type}`, path, value);
    }
    return negative ? `-${digits}` : digits;
  };
}

const boolNormaliser: Normaliser = (value, path) => {
  if (value === true || value === false) return value;
  if (value === 1 || value === 1n || value === '1' || value === 'true') return true;
  if (value === 0 || value === 0n || value === '0' || value === 'false') return false;
  throw new DecodeValueError('not a bool', path, value);
};

const addressNormaliser: Normaliser = (value, path) => {
  if (typeof value === 'string') {
    if (ADDRESS_RE.test(value)) return `0x${value.slice(2).toLowerCase()}`;
    if (BARE_ADDRESS_RE.test(value)) return `0x${value.toLowerCase()}`;
  }
  const hex = bytesToHex(value);
  if (hex !== null) {
    if (hex.length === 42) return hex;
    if (hex.length === 66 && hex.startsWith(PADDED_ADDRESS_PREFIX)) return `0x${hex.slice(26)}`;
  }
  throw new DecodeValueError('not an address', path, value);
};

function fixedBytesNormaliser(size: number): Normaliser {
  return (value, path) => {
    const hex = bytesToHex(value);
    if (hex === null) throw new DecodeValueError(`not bytes${size}`, path, value);
    if (hex.length !== 2 + size * 2) throw new DecodeValueError(`wrong length for bytes${size}`, path, value);
    return hex;
  };
}

const bytesNormaliser: Normaliser = (value, path) => {
  const hex = bytesToHex(value);
  if (hex === null) throw new DecodeValueError('not bytes', path, value);
  return hex;
};

const stringNormaliser: Normaliser = (value, path) => {
  if (typeof value === 'string') return value;
  throw new DecodeValueError('not a string', path, value);
};

/** Some paths send nested values as JSON text: parse it when it starts with one of `openers`. */
function parseJsonText(value: unknown, openers: string): unknown {
  if (typeof value !== 'string') return value;
  const first = value.trimStart()[0];
  if (first === undefined || !openers.includes(first)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Loose name match for service keys: case and underscores ignored (`Amount`, `_amount`, `amount`). */
function looseKey(name: string): string {
  return name.toLowerCase().replace(/_/g, '');
}

/**
 * The value of a named (or, when unnamed, positional) parameter in an object the service sent:
 * exact key first, then a key equal up to case and underscores. `undefined` when absent.
 */
export function lookupParam(obj: Record<string, unknown>, name: string | undefined, index: number): unknown {
  if (name) {
    if (Object.hasOwn(obj, name)) return obj[name];
    const want = looseKey(name);
    for (const key of Object.keys(obj)) if (looseKey(key) === want) return obj[key];
    return undefined;
  }
  const key = String(index);
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function arrayNormaliser(element: AbiParameter, length: number | null, type: string): Normaliser {
  const item = compile(element);
  const elementIsUint8 = element.type === 'uint8';
  return (value, path) => {
    let list = parseJsonText(value, '[');
    // Go marshals []uint8 as base64: accept bytes for uint8 arrays.
    if (elementIsUint8 && !Array.isArray(list)) {
      const hex = bytesToHex(list);
      if (hex !== null) list = Array.from(Buffer.from(hex.slice(2), 'hex'));
    }
    if (!Array.isArray(list)) throw new DecodeValueError(`not an array for ${type}`, path, value);
    if (length !== null && list.length !== length) {
      throw new DecodeValueError(`wrong length for ${type}`, path, value);
    }
    return list.map((x, i) => item(x, `${path}[${i}]`));
  };
}

function tupleNormaliser(components: readonly AbiParameter[]): Normaliser {
  const items = components.map(compile);
  const names = components.map((c) => c.name ?? '');
  const named = names.every((n) => n !== '') && new Set(names).size === names.length;
  return (value, path) => {
    const tuple = parseJsonText(value, '{[');
    let parts: unknown[];
    if (Array.isArray(tuple)) {
      if (tuple.length !== components.length) throw new DecodeValueError('wrong number of tuple components', path, value);
      parts = tuple;
    } else if (isRecord(tuple)) {
      parts = components.map((c, i) => {
        // Unnamed components: by position, or `field<i>` as the open-source indexer names them.
        const part = lookupParam(tuple, c.name, i) ?? (c.name ? undefined : tuple[`field${i}`]);
        if (part === undefined) throw new DecodeValueError('missing tuple component', `${path}.${c.name ?? i}`, value);
        return part;
      });
    } else {
      throw new DecodeValueError('not a tuple', path, value);
    }
    const out = parts.map((part, i) => (items[i] as Normaliser)(part, `${path}.${names[i] || i}`));
    if (!named) return out;
    const obj: Record<string, JsonValue> = {};
    for (let i = 0; i < names.length; i++) obj[names[i] as string] = out[i] as JsonValue;
    return obj;
  };
}

function compile(param: AbiParameter): Normaliser {
  const info = typeInfo(param);
  switch (info.kind) {
    case 'int':
      return intNormaliser(info.bits, info.signed, param.type);
    case 'bool':
      return boolNormaliser;
    case 'address':
      return addressNormaliser;
    case 'fixedBytes':
      return fixedBytesNormaliser(info.size);
    case 'bytes':
      return bytesNormaliser;
    case 'string':
      return stringNormaliser;
    case 'array':
      return arrayNormaliser(info.element, info.length, param.type);
    case 'tuple':
      return tupleNormaliser(info.components);
    case 'unsupported':
      return (value, path) => {
        throw new DecodeValueError(`unsupported type ${info.type}`, path, value);
      };
  }
}

export type RowNormaliser = (value: unknown) => RowValue;

/** A normaliser for one top-level parameter (compiled once, used per row). */
export function compileNormaliser(param: AbiParameter): RowNormaliser {
  const path = param.name ?? '';
  if (isIndexed(param) && isHashedWhenIndexed(param)) {
    const hash = fixedBytesNormaliser(32);
    return (value) => hash(value, path) as string;
  }
  const norm = compile(param);
  const info = typeInfo(param);
  if (info.kind === 'array' || info.kind === 'tuple') return (value) => JSON.stringify(norm(value, path));
  return (value) => norm(value, path) as RowValue;
}

/** The same rules for values nested in JSON (decoded_inputs_json): structures stay structures. */
export function compileJsonNormaliser(param: AbiParameter): (value: unknown) => JsonValue {
  const norm = compile(param);
  const path = param.name ?? '';
  return (value) => norm(value, path);
}

const cache = new WeakMap<AbiParameter, RowNormaliser>();

/**
 * Normalises one decoded value (viem's output or the service's `decoded` shapes) to the column
 * value of its ABI type. Throws DecodeValueError when the value cannot be of that type.
 */
export function normaliseValue(value: unknown, abiType: AbiParameter): RowValue {
  let norm = cache.get(abiType);
  if (!norm) {
    norm = compileNormaliser(abiType);
    cache.set(abiType, norm);
  }
  return norm(value);
}
