/**
 * An S3 operation tried again while the endpoint is unavailable, with backoff, within the store's
 * retry budget (s3.retry_budget), and a warning each `stillWaitingMs` while it waits.
 */
import type { Logger } from '../log.js';
import { StoreUnavailableError } from './errors.js';

/** How long an S3 store keeps trying, where it says so, and where it counts its retries. */
export interface RetryBudget {
  retryBudgetMs: number;
  stillWaitingMs: number;
  /** The endpoint's origin (no credentials, path or query), or "aws". */
  endpointOrigin: string;
  log: Logger;
  stats: { retries: number };
}

/** Backoff between tries of an operation: doubling from the first wait up to the longest, with jitter. */
const BACKOFF_FIRST_MS = 200;
const BACKOFF_MAX_MS = 5_000;

/**
 * Runs one try of an operation again while the store is unavailable (StoreUnavailableError:
 * connection refused or reset, timeouts, 5xx after the SDK's own attempts), waiting longer each
 * time, until the retry budget is spent; any other error ends it at once.
 */
export async function retrying<T>(b: RetryBudget, op: string, key: string, once: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const waiting = setInterval(() => {
    const waitedS = Math.round((Date.now() - started) / 100) / 10;
    b.log.warn(
      { op, key, endpoint: b.endpointOrigin, waited_s: waitedS, retry_budget_s: b.retryBudgetMs / 1000 },
      'S3 operation still waiting for the endpoint',
    );
  }, b.stillWaitingMs);
  waiting.unref();
  try {
    return await tryWithinBudget(b, op, key, once, started);
  } finally {
    clearInterval(waiting);
  }
}

async function tryWithinBudget<T>(b: RetryBudget, op: string, key: string, once: () => Promise<T>, started: number): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await once();
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      const elapsed = Date.now() - started;
      const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (tries - 1)) * (0.5 + Math.random() / 2);
      if (elapsed + wait > b.retryBudgetMs) {
        if (tries === 1) throw err;
        throw new StoreUnavailableError(err.shortMessage, {
          details: `${err.details ?? ''}; tried ${tries} times over ${Math.round(elapsed / 100) / 10} s (s3.retry_budget ${b.retryBudgetMs / 1000} s)`,
          hint: err.hint,
          cause: err.cause,
        });
      }
      if (tries === 1) b.log.warn({ op, key, err: err.shortMessage }, 'S3 unavailable; retrying');
      b.stats.retries++;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
