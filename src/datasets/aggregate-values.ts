/**
 * The values of aggregation rows as written: each made to fit its expression's column (the
 * service's numbers, decimal strings and SQL or RFC 3339 times in one form), found by its key,
 * and ordered by group values.
 */
import { isoDate, isoTime, type ColumnType, type RowValue } from '../columns/columns.js';
import type { AggregationRow } from '../source/records.js';

const DECIMAL_RE = /^-?(?:0|[1-9][0-9]*)$/;
const SQL_TIME_RE = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:Z|\+00:00)?$/;

export function cell(value: unknown, type: ColumnType, fail: () => Error): RowValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'int64':
    case 'int32': {
      let n = value;
      if (typeof value === 'string') {
        const text = value.trim();
        const time = SQL_TIME_RE.exec(text); // block_timestamp as a DateTime (RFC 3339 or SQL text)
        n = DECIMAL_RE.test(text) ? Number(text) : time ? Date.parse(`${time[1]}T${time[2]}Z`) / 1000 : value;
      }
      if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw fail();
      return n;
    }
    case 'uint256': {
      if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
      if (typeof value === 'string' && /^[0-9]+$/.test(value.trim())) return BigInt(value.trim()).toString();
      throw fail();
    }
    case 'date': {
      if (typeof value === 'number' && Number.isFinite(value)) return isoDate(value);
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
      throw fail();
    }
    case 'timestamp': {
      if (typeof value === 'number' && Number.isFinite(value)) return isoTime(value);
      const m = typeof value === 'string' ? SQL_TIME_RE.exec(value.trim()) : null;
      if (!m) throw fail();
      return `${m[1]}T${m[2]}Z`;
    }
    case 'bool':
      if (typeof value === 'boolean') return value;
      throw fail();
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** The value of an expression: by its key, else by the key without spaces or in another case. */
export function lookup(values: AggregationRow, key: string): unknown {
  if (Object.hasOwn(values, key)) return values[key];
  const norm = (k: string) => k.replace(/\s+/g, '').toLowerCase();
  const want = norm(key);
  for (const k of Object.keys(values)) if (norm(k) === want) return values[k];
  return undefined;
}

/** Sort order of rows by their group values (numbers numerically, decimal strings by value). */
export function compareCells(a: RowValue, b: RowValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  if (DECIMAL_RE.test(x) && DECIMAL_RE.test(y)) {
    const d = BigInt(x) - BigInt(y);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  return x < y ? -1 : 1;
}
