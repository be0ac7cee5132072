/**
 * The parsers of settings given as strings (environment variables, flags; yargs may hand
 * numbers), beside the file schemas of the settings table.
 */
import path from 'node:path';
import { foreignPathProblem } from '../store/local-path.js';
import { z } from 'zod';
import { checked } from './setting.js';
import { DURATION_ERROR, DURATION_PATTERN, parseDurationMs, type Parsed } from './values.js';

export function intIn(min: number, max: number) {
  return (v: unknown): Parsed<number> => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) return { ok: false, problem: `is not a whole number from ${min} to ${max}` };
    return { ok: true, value: n };
  };
}

/** A budget below this paces one request per 100 s or slower: a typo (1e-9), not a plan. */
export const MIN_REQUESTS_PER_SECOND = 0.01;
const MAX_REQUESTS_PER_SECOND = 100_000;
export const REQUESTS_PER_SECOND_RANGE = `must be 0 (unlimited) or from ${MIN_REQUESTS_PER_SECOND} to ${MAX_REQUESTS_PER_SECOND}`;

export function requestsPerSecondInRange(n: number): boolean {
  return n === 0 || (n >= MIN_REQUESTS_PER_SECOND && n <= MAX_REQUESTS_PER_SECOND);
}

export function requestsPerSecond(v: unknown): Parsed<number> {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0) return { ok: false, problem: 'is not a number >= 0' };
  return requestsPerSecondInRange(n) ? { ok: true, value: n } : { ok: false, problem: REQUESTS_PER_SECOND_RANGE };
}

export function oneOf<T extends string>(values: readonly T[]) {
  return (v: unknown): Parsed<T> =>
    typeof v === 'string' && (values as readonly string[]).includes(v.trim())
      ? { ok: true, value: v.trim() as T }
      : { ok: false, problem: `is not one of ${values.join(', ')}` };
}

export function positiveDurationMs(v: unknown): Parsed<number> {
  const r = parseDurationMs(v);
  return r.ok && r.value === 0 ? { ok: false, problem: 'must be longer than 0' } : r;
}

export function anyString(v: unknown): Parsed<string> {
  return typeof v === 'string' && v.trim() !== '' ? { ok: true, value: v.trim() } : { ok: false, problem: 'is empty' };
}

export function directory(v: unknown, cwd: string): Parsed<string> {
  if (typeof v !== 'string' || !v.trim()) return { ok: false, problem: 'is empty' };
  const foreign = foreignPathProblem(v.trim());
  if (foreign) return { ok: false, problem: foreign, hint: 'write a "/" path, e.g. "/var/tmp/insight-export"' };
  return { ok: true, value: path.resolve(cwd, v.trim()) };
}

/** A range point from a flag: digits are a block number (or unix seconds with `by: time`), anything else a date or "latest"; the job's schema checks it. */
export function rangePoint(v: unknown): Parsed<number | string> {
  if (typeof v === 'number') return { ok: true, value: v };
  if (typeof v !== 'string' || v.trim() === '') return { ok: false, problem: 'is empty' };
  const s = v.trim();
  return { ok: true, value: /^\d+$/.test(s) ? Number(s) : s };
}

export function milliseconds(ms: number): string {
  return `${ms}ms`;
}

export function flagBoolean(v: unknown): Parsed<boolean> {
  return typeof v === 'boolean' ? { ok: true, value: v } : { ok: false, problem: 'is not true or false' };
}

/** What the duration settings share: written "30s" in files (checked as a duration), held in milliseconds, shown as such. */
export function durationSetting(parse: (v: unknown) => Parsed<number>, defaultMs: number, defaultText: string) {
  return {
    parse,
    file: () => checked(z.string().regex(new RegExp(DURATION_PATTERN), { error: DURATION_ERROR }), parse),
    default: () => defaultMs,
    defaultText,
    show: milliseconds,
  };
}

/** A whole number from `min` to `max`: the same bounds for the environment, flags and files. */
export function wholeNumberSetting(min: number, max: number) {
  return { parse: intIn(min, max), file: () => z.number().int().min(min).max(max) };
}

/** One of `values`: the same list for the environment, flags and files. */
export function choiceSetting<V extends string>(values: readonly V[]) {
  return { parse: oneOf(values), file: () => z.enum(values) };
}
