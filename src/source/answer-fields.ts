/**
 * Reading one field of an answer: typed and checked, or a ResponseShapeError naming the JSON path
 * of the problem. Liberal where versions of the service differ (numbers as strings or hex, older
 * datetime strings, Go's `null` for an empty array), strict about the rest.
 *
 * Hot path (1M rows per run): plain loops and explicit field reads, no per-row closures or
 * regexes; JSON paths are only built when something is wrong.
 */
import { ResponseShapeError } from './errors.js';

export type Obj = Record<string, unknown>;

/** Where in the document a value sits; turned into '$.data[3].hash' only on failure. */
export function pathOf(base: string, index: number, key: string): string {
  let p = base;
  if (index >= 0) p += `[${index}]`;
  if (key) p += `.${key}`;
  return p;
}

export function fail(url: string, base: string, index: number, key: string, what: string): never {
  throw new ResponseShapeError('shape', url, pathOf(base, index, key), what);
}

export function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Scalars

export function isDecimalDigits(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

export function isHexDigits(s: string, from: number): boolean {
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
export function toSafeUint(v: unknown): number | undefined {
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

export function int(v: unknown, url: string, base: string, i: number, key: string): number {
  const n = toSafeUint(v);
  if (n === undefined) fail(url, base, i, key, `expected a non-negative integer, got ${describe(v)}`);
  return n;
}

export function intOrNull(v: unknown, url: string, base: string, i: number, key: string): number | null {
  if (v === undefined || v === null) return null;
  return int(v, url, base, i, key);
}

/** Unix seconds; also accepts the ClickHouse/ISO datetime strings of older versions (UTC). */
export function timestamp(v: unknown, url: string, base: string, i: number, key: string): number {
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
export function dec(v: unknown, url: string, base: string, i: number, key: string): string {
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

export function decOrNull(v: unknown, url: string, base: string, i: number, key: string): string | null {
  if (v === undefined || v === null) return null;
  return dec(v, url, base, i, key);
}

export function str(v: unknown, url: string, base: string, i: number, key: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return fail(url, base, i, key, `expected a string, got ${describe(v)}`);
}

export function strOrNull(v: unknown, url: string, base: string, i: number, key: string): string | null {
  if (v === undefined || v === null) return null;
  return str(v, url, base, i, key);
}

/** Hashes, addresses, hex data: lowercase. */
export function hex(v: unknown, url: string, base: string, i: number, key: string): string {
  if (typeof v === 'string') return v.toLowerCase();
  return fail(url, base, i, key, `expected a hex string, got ${describe(v)}`);
}

/** Null also for "" and the NUL padding of an empty ClickHouse FixedString (the indexer's to_address, function_selector). */
export function hexOrNull(v: unknown, url: string, base: string, i: number, key: string): string | null {
  if (v === undefined || v === null || v === '' || (typeof v === 'string' && v.charCodeAt(0) === 0)) return null;
  return hex(v, url, base, i, key);
}

export function boolOrNull(v: unknown, url: string, base: string, i: number, key: string): boolean | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v;
  return fail(url, base, i, key, `expected a boolean, got ${describe(v)}`);
}

export function objOrNull(v: unknown, url: string, base: string, i: number, key: string): Obj | null {
  if (v === undefined || v === null) return null;
  if (isObj(v)) return v;
  return fail(url, base, i, key, `expected an object, got ${describe(v)}`);
}

/** An array; Go servers send `null` for an empty one. */
export function arrayOrEmpty(v: unknown, url: string, base: string, i: number, key: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  return fail(url, base, i, key, `expected an array, got ${describe(v)}`);
}

export function record(v: unknown, url: string, base: string, i: number): Obj {
  if (isObj(v)) return v;
  return fail(url, base, i, '', `expected an object, got ${describe(v)}`);
}
