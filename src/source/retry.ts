/** Which failures are worth another attempt, and how long to wait before it. */
import { HttpStatusError, NetworkError, NotAPageError, RequestTimeoutError, ResponseShapeError } from './errors.js';

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** Connection errors that will not get better by trying again. */
const PERMANENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ENOTFOUND',
  'ERR_INVALID_URL',
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'UND_ERR_DESTROYED',
  'UND_ERR_CLOSED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
]);

export function isRetryable(err: unknown): boolean {
  if (err instanceof HttpStatusError) return RETRYABLE_STATUSES.has(err.status);
  if (err instanceof RequestTimeoutError || err instanceof NotAPageError) return true;
  if (err instanceof ResponseShapeError) return err.problem !== 'shape';
  if (err instanceof NetworkError) return err.code === undefined || !PERMANENT_NETWORK_CODES.has(err.code);
  return false;
}

/** Longest wait we honour from a Retry-After header. */
export const MAX_RETRY_AFTER_MS = 300_000;

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from `now`; undefined if absent/bad. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.min(MAX_RETRY_AFTER_MS, Math.round(Number(text) * 1000));
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/** Exponential backoff with full jitter: uniform in [0, min(maxMs, baseMs * 2^(retry-1))]. */
export function backoffDelay(retry: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(random() * ceiling);
}
