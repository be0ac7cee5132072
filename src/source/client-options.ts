/**
 * What a read-interface client is built from: its endpoints (checked to carry no secret, since
 * every URL is logged), its keys from the environment, and its limits.
 */
import type { Logger } from '../log.js';
import type { Backoff } from './retry.js';
import type { RateLimiter } from './rate-limiter.js';
import { RequestValidationError } from './errors.js';

export interface ClientOptions {
  /** Includes the path prefix: 'http://127.0.0.1:8787/insights/v1' or 'https://insight.thirdweb.com/v1'. */
  baseUrl: string;
  /** Explorer area including its prefix; default: origin of baseUrl + '/api/v2'. */
  explorerBaseUrl?: string;
  /** Sent as x-client-id. */
  clientId?: string;
  /** Sent as x-secret-key. */
  secretKey?: string;
  /** Per request, headers and body together; default 30_000. */
  timeoutMs?: number;
  /** Attempts per request including the first; default 6 (1 = no retry). */
  maxAttempts?: number;
  /** Exponential backoff with full jitter; default 250 / 20_000 ms. */
  backoff?: Backoff;
  /** Keep-alive connections per origin; default 16. */
  connections?: number;
  /** Cap on concurrent requests shared by all calls of this client; default: `connections`. */
  maxInFlight?: number;
  /** Most chain ids one list or resolve request names (source.chain_ids_per_request); halved when the service refuses it. Default 55. */
  chainIdsPerRequest?: number;
  /** Requests-per-second budget shared by the whole run. */
  rateLimiter?: RateLimiter;
  /** Each retry is logged at warn with url, status, attempt, delay (never headers). */
  logger?: Logger;
  /** For tests: the jitter source. */
  random?: () => number;
}

export interface AuthFromEnv {
  clientId?: string;
  secretKey?: string;
}

/** Reads INSIGHT_CLIENT_ID / INSIGHT_SECRET_KEY (empty values count as unset). */
export function authFromEnv(env: Record<string, string | undefined> = process.env): AuthFromEnv {
  const auth: AuthFromEnv = {};
  const clientId = env.INSIGHT_CLIENT_ID?.trim();
  const secretKey = env.INSIGHT_SECRET_KEY?.trim();
  if (clientId) auth.clientId = clientId;
  if (secretKey) auth.secretKey = secretKey;
  return auth;
}

export interface Endpoint {
  origin: string;
  /** Path prefix without a trailing slash: '/insights/v1', '' ... */
  prefix: string;
}

export function parseBaseUrl(parameter: string, value: string): Endpoint {
  let url: URL;
  try {
    url = new URL(value);
  } catch (err) {
    throw new RequestValidationError(parameter, `not a URL: ${JSON.stringify(value)}`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RequestValidationError(parameter, `expected an http(s) URL, got ${url.protocol}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    // Anything there would end up in logs and error messages.
    throw new RequestValidationError(parameter, 'must not contain credentials, a query string or a fragment', {
      hint: 'Put keys in INSIGHT_CLIENT_ID / INSIGHT_SECRET_KEY.',
    });
  }
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

export function positiveInt(parameter: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RequestValidationError(parameter, `expected a positive integer, got ${value}`);
  return value;
}
