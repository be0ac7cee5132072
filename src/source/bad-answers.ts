/**
 * Answers that are not a proof. A short answer proves its slice only when it is an answer for
 * that slice: one answer may come from a lagging replica, a stale cache or a broken proxy. What a
 * run can check (docs/real-service.md says what each catches):
 * - outside_slice: a row of a requested chain outside the slice asked for (the answer of another
 *   slice, a timestamp in milliseconds on a time slice);
 * - implausible: a row no answer for the window can hold (a block timestamp after the window's edge
 *   block, e.g. in milliseconds; a block after the edge of a time window);
 * - block_hash: a row at a block the run resolved, with another hash or timestamp (an answer of
 *   another branch: a cache from before a reorganisation);
 * - fewer_than_known: fewer rows than a wider answer already showed in the slice (an empty answer
 *   from a shard missing for a moment, a replica behind the one that answered before);
 * - unexpectedly_empty: no row at all where the chain's density (rows per block or second, from
 *   the slices and windows before) expects many: not a proof that rows exist, so asked once more
 *   only (an answer with rows wins; a second empty answer is taken);
 * - cut_page: exactly `limit - 1` rows for a chain, what a proxy that drops the last row of a full
 *   page sends: split like a full answer (not retried, not an error);
 * - edge_not_served: a block the run knows the service serves (it served a block above it) answered
 *   as missing.
 * Such an answer is asked again after a backoff (InsightClient.retryBadAnswer); when every attempt
 * is bad, the window fails with BadAnswerError (exit 1: the service is inconsistent for now, a later
 * run may get a consistent answer). Disagreements between answers (an edge found and then not, a
 * reorganisation reported and then not confirmed) end in ServiceDisagreementError (exit 1).
 */
import { InsightExportError, type ErrorParameters } from '../errors.js';

export const BAD_ANSWER_REASONS = [
  'outside_slice',
  'implausible',
  'block_hash',
  'fewer_than_known',
  'unexpectedly_empty',
  'cut_page',
  'edge_not_served',
] as const;
export type BadAnswerReason = (typeof BAD_ANSWER_REASONS)[number];

/** Answers not taken as a proof, by reason: counted by the client for the run report and metrics. */
export type BadAnswerCounts = Partial<Record<BadAnswerReason, number>>;

/** Every reason, with 0 for those that did not occur (run report, metrics). */
export function allBadAnswerReasons(counts: BadAnswerCounts): Record<BadAnswerReason, number> {
  return Object.fromEntries(BAD_ANSWER_REASONS.map((r) => [r, counts[r] ?? 0])) as Record<BadAnswerReason, number>;
}

/** The service kept answering a slice with answers that cannot prove it: the window is not exported (exit 1). */
export class BadAnswerError extends InsightExportError {
  override name = 'BadAnswerError';
  readonly reason: BadAnswerReason;
  constructor(reason: BadAnswerReason, what: string, params: ErrorParameters = {}) {
    super(`The service answered ${what}, again on every attempt (${reason})`, {
      hint:
        params.hint ??
        'The service (or a proxy, cache or replica in front of it) answers inconsistently for now: run again later; nothing of this window was written.',
      ...(params.details === undefined ? {} : { details: params.details }),
    });
    this.reason = reason;
  }
}

/** Two answers of the service contradict each other (exit 1: a later run may find it consistent). */
export class ServiceDisagreementError extends InsightExportError {
  override name = 'ServiceDisagreementError';
}

/** An answer that proves nothing, as the paginator and the block lookups report it. */
export interface BadAnswer {
  reason: BadAnswerReason;
  /** What the service answered, for the log and the error (the slice, the row that tells). */
  what: string;
  chainIds?: number[];
  /** The row that tells, where one does (a row outside the slice, of another branch ...). */
  row?: unknown;
}

/** How a run treats answers that prove nothing: counted, then asked again after a backoff. */
export interface AnswerPolicy {
  /** Counts one (the run report's bad_answers). */
  note(reason: BadAnswerReason): void;
  /** Waits before attempt `attempt + 1`; false when `attempt` was the last (the caller fails with BadAnswerError). */
  retry(attempt: number, bad: BadAnswer): Promise<boolean>;
}

/** Attempts of the policy without a client (unit tests): asked again at once. */
const DEFAULT_ATTEMPTS = 6;

export const IMMEDIATE_RETRIES: AnswerPolicy = {
  note: () => undefined,
  retry: (attempt) => Promise.resolve(attempt < DEFAULT_ATTEMPTS),
};

/** How many values of `sorted` (ascending) lie in [lo, hi). */
export function countIn(sorted: readonly number[], lo: number, hi: number): number {
  return lowerBound(sorted, hi) - lowerBound(sorted, lo);
}

function lowerBound(sorted: readonly number[], x: number): number {
  let a = 0;
  let b = sorted.length;
  while (a < b) {
    const m = (a + b) >> 1;
    if (sorted[m]! < x) a = m + 1;
    else b = m;
  }
  return a;
}
