import type { Column, ColumnType, Row } from '../columns/columns.js';
import { InvalidRowValueError } from './errors.js';

/**
 * Checking and encoding of row values against the column model (src/columns/columns.ts).
 * Every writer goes through here, so a value that does not fit its column fails the same way in
 * NDJSON and both Parquet engines, before any byte of its page is written.
 */

const MAX_UINT256 = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
const UINT256_RE = /^(?:0|[1-9][0-9]{0,77})$/;
const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

// ES2024 string methods (Node 20 has them; the ES2023 lib typings do not).
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** Lone UTF-16 surrogates become U+FFFD, as TextEncoder does: DuckDB's JSON reader rejects them. */
export function wellFormed(s: string): string {
  const w = s as unknown as WellFormedString;
  return w.isWellFormed() ? s : w.toWellFormed();
}

function isUint256(v: unknown): v is string {
  return typeof v === 'string' && UINT256_RE.test(v) && (v.length < 78 || v <= MAX_UINT256);
}

function validCalendarDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
  return d <= days;
}

function isTimestamp(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = TIMESTAMP_RE.exec(v);
  return m !== null && validCalendarDate(+m[1]!, +m[2]!, +m[3]!) && +m[4]! < 24 && +m[5]! < 60 && +m[6]! < 60;
}

function isDate(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const m = DATE_RE.exec(v);
  return m !== null && validCalendarDate(+m[1]!, +m[2]!, +m[3]!);
}

/** `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` to microseconds since the epoch (exact, also past 2^53). */
export function timestampMicros(v: string): bigint {
  const ms = Date.parse(`${v.slice(0, 19)}Z`);
  const fraction = v.length > 20 ? v.slice(20, -1).padEnd(6, '0') : '0';
  return BigInt(ms) * 1000n + BigInt(fraction);
}

/** `YYYY-MM-DD` to days since the epoch. */
export function dateDays(v: string): number {
  return Date.parse(`${v}T00:00:00Z`) / DAY_MS;
}

/** What each column type accepts, for error messages. */
const EXPECTED: Record<ColumnType, string> = {
  int32: 'an integer number in [-2^31, 2^31-1]',
  int64: 'a safe integer number (|n| <= 2^53-1)',
  uint256: 'an exact decimal string without leading zeros, 0 to 2^256-1',
  string: 'a string',
  json: 'a string holding JSON text',
  bool: 'a boolean',
  timestamp: 'an ISO-8601 UTC string YYYY-MM-DDTHH:MM:SS[.ffffff]Z',
  date: 'a YYYY-MM-DD string',
};

function preview(v: unknown): string {
  if (v === undefined) return 'undefined (missing)';
  let s: string;
  try {
    s = typeof v === 'bigint' ? `${v}n` : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return `${s.length > 80 ? `${s.slice(0, 77)}...` : s} (${v === null ? 'null' : typeof v})`;
}

export function invalidValue(col: Column, value: unknown, rowInPage: number, rowInFile: number): InvalidRowValueError {
  const isNull = value === null || value === undefined;
  const what = isNull ? `Column "${col.name}" is not nullable` : `Value does not fit column "${col.name}" (${col.type})`;
  return new InvalidRowValueError(col.name, what, {
    details: `row ${rowInPage} of the page (row ${rowInFile} of the file), column "${col.name}": got ${preview(value)}`,
    hint: isNull
      ? `The dataset declares "${col.name}" as non-nullable: its row mapper must always set it.`
      : `A ${col.type} column takes ${EXPECTED[col.type]}; fix the dataset's row mapper or decoder.`,
  });
}

/** Returns the JSON text of a valid non-null value, or undefined when the value does not fit. */
type JsonEncoder = (v: unknown) => string | undefined;

function lastValueMemo(check: (v: unknown) => v is string): JsonEncoder {
  // Timestamps and dates repeat row after row (sorted by block): check each distinct run once.
  let last: string | undefined;
  return (v) => {
    if (v === last) return `"${v}"`;
    if (!check(v)) return undefined;
    last = v;
    return `"${v}"`;
  };
}

function jsonEncoder(type: ColumnType): JsonEncoder {
  switch (type) {
    case 'int32':
      return (v) => (typeof v === 'number' && (v | 0) === v ? String(v) : undefined);
    case 'int64':
      return (v) => (Number.isSafeInteger(v) ? String(v) : undefined);
    case 'uint256':
      return (v) => (isUint256(v) ? `"${v}"` : undefined);
    case 'string':
    case 'json':
      return (v) => (typeof v === 'string' ? JSON.stringify(wellFormed(v)) : undefined);
    case 'bool':
      return (v) => (v === true ? 'true' : v === false ? 'false' : undefined);
    case 'timestamp':
      return lastValueMemo(isTimestamp);
    case 'date':
      return lastValueMemo(isDate);
  }
}

/**
 * Whether a non-null value fits its column and JSON.stringify writes it exactly as jsonEncoder
 * does: 'wellFormed' for strings that must also be checked for lone surrogates.
 */
type FitCheck = (v: unknown) => boolean | 'wellFormed';

function lastValueCheck(check: (v: unknown) => v is string): FitCheck {
  let last: string | undefined;
  return (v) => {
    if (v === last) return true;
    if (!check(v)) return false;
    last = v as string;
    return true;
  };
}

function fitCheck(type: ColumnType): FitCheck {
  switch (type) {
    case 'int32':
      return (v) => typeof v === 'number' && (v | 0) === v;
    case 'int64':
      return (v) => Number.isSafeInteger(v);
    case 'uint256':
      return isUint256;
    case 'string':
    case 'json':
      return (v) => typeof v === 'string' && 'wellFormed';
    case 'bool':
      return (v) => typeof v === 'boolean';
    case 'timestamp':
      return lastValueCheck(isTimestamp);
    case 'date':
      return lastValueCheck(isDate);
  }
}

/**
 * A page encoder: rows -> one NDJSON string, one object per line with exactly the declared
 * columns in declared order (a missing key is written as null).
 *
 * A row whose own keys are exactly the columns in order (what the datasets build) is checked value
 * by value and then written by JSON.stringify, which is native and ~3x faster than building the
 * line in JS; any other row (missing, extra or reordered keys, undefined values, strings with
 * lone surrogates) is built column by column. Both give the same text.
 */
export function createNdjsonEncoder(columns: readonly Column[]): (rows: readonly Row[], firstRowInFile: number) => string {
  const n = columns.length;
  const names = columns.map((c) => c.name);
  const keys = columns.map((c, i) => (i === 0 ? '{' : ',') + JSON.stringify(c.name) + ':');
  const nullable = columns.map((c) => c.nullable);
  const encoders = columns.map((c) => jsonEncoder(c.type));
  const checks = columns.map((c) => fitCheck(c.type));

  const slowLine = (row: Row, r: number, firstRowInFile: number): string => {
    let out = '';
    for (let i = 0; i < n; i++) {
      const v = row[names[i]!];
      let text: string | undefined;
      if (v === null || v === undefined) text = nullable[i] ? 'null' : undefined;
      else text = encoders[i]!(v);
      if (text === undefined) throw invalidValue(columns[i]!, v, r, firstRowInFile + r);
      out += keys[i]! + text;
    }
    return `${out}}`;
  };

  /** True when JSON.stringify(row) is the line; throws for a value that does not fit. */
  const fastPath = (row: Row, r: number, firstRowInFile: number): boolean => {
    const own = Object.keys(row);
    if (own.length !== n) return false;
    for (let i = 0; i < n; i++) {
      if (own[i] !== names[i]) return false;
      const v = row[names[i]!];
      if (v === null) {
        if (!nullable[i]) throw invalidValue(columns[i]!, v, r, firstRowInFile + r);
        continue;
      }
      if (v === undefined) return false;
      const fits = checks[i]!(v);
      if (fits === false) throw invalidValue(columns[i]!, v, r, firstRowInFile + r);
      if (fits === 'wellFormed' && !(v as unknown as WellFormedString).isWellFormed()) return false;
    }
    return true;
  };

  return (rows, firstRowInFile) => {
    const lines = new Array<string>(rows.length + 1);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      lines[r] = fastPath(row, r, firstRowInFile) ? JSON.stringify(row) : slowLine(row, r, firstRowInFile);
    }
    lines[rows.length] = '';
    return rows.length === 0 ? '' : lines.join('\n');
  };
}

/** A value as hyparquet-writer takes it for our schema (see parquet-hyparquet.ts). */
export type ParquetValue = number | bigint | string | boolean | null;

/** Returns the converted value, or undefined when the value does not fit. */
type ParquetConverter = (v: unknown) => ParquetValue | undefined;

function memoConverter<T extends ParquetValue>(check: (v: unknown) => v is string, convert: (v: string) => T): ParquetConverter {
  let lastIn: string | undefined;
  let lastOut: T | undefined;
  return (v) => {
    if (v === lastIn) return lastOut;
    if (!check(v)) return undefined;
    lastIn = v;
    lastOut = convert(v);
    return lastOut;
  };
}

function parquetConverter(type: ColumnType): ParquetConverter {
  switch (type) {
    case 'int32':
      return (v) => (typeof v === 'number' && (v | 0) === v ? v : undefined);
    case 'int64':
      return (v) => (Number.isSafeInteger(v) ? BigInt(v as number) : undefined);
    case 'uint256':
      return (v) => (isUint256(v) ? v : undefined);
    case 'string':
    case 'json':
      return (v) => (typeof v === 'string' ? wellFormed(v) : undefined);
    case 'bool':
      return (v) => (typeof v === 'boolean' ? v : undefined);
    case 'timestamp':
      return memoConverter(isTimestamp, timestampMicros);
    case 'date':
      return memoConverter(isDate, dateDays);
  }
}

/**
 * Converts rows into per-column arrays of Parquet values. Appends a whole page or nothing:
 * the page is converted into fresh arrays first, so a bad value leaves the buffers untouched.
 */
export function createColumnarConverter(columns: readonly Column[]) {
  const n = columns.length;
  const names = columns.map((c) => c.name);
  const nullable = columns.map((c) => c.nullable);
  const converters = columns.map((c) => parquetConverter(c.type));
  return (rows: readonly Row[], firstRowInFile: number): ParquetValue[][] => {
    const out: ParquetValue[][] = [];
    for (let i = 0; i < n; i++) {
      const convert = converters[i]!;
      const name = names[i]!;
      const values = new Array<ParquetValue>(rows.length);
      for (let r = 0; r < rows.length; r++) {
        const v = rows[r]![name];
        let converted: ParquetValue | undefined;
        if (v === null || v === undefined) converted = nullable[i] ? null : undefined;
        else converted = convert(v);
        if (converted === undefined) throw invalidValue(columns[i]!, v, r, firstRowInFile + r);
        values[r] = converted;
      }
      out.push(values);
    }
    return out;
  };
}
