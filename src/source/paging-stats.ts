/**
 * What paging counts: requests, splits, and the rows dropped as not the request's, by chain and
 * reason (for logs, reports and the bench).
 */

/**
 * Why a row the service sent is not written: of a chain the request did not ask for, outside the
 * slice asked for, or what the dataset's own check says (another wallet, contract, event).
 */
export const REJECT_REASONS = ['other_chain', 'outside_slice', 'other_wallet', 'other_contract', 'other_event'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface PagingStats {
  requests: number;
  /** Answers that were full for a chain, whose slice was then split. */
  splits: number;
  /**
   * Rows of the answers read that were dropped as not the request's, by chain and reason: a row of
   * a chain the request did not ask for counts under the first chain it asked for.
   */
  rejected: Map<number, Partial<Record<RejectReason, number>>>;
  /** The first row rejected, for the log. */
  rejectedExample: { reason: RejectReason; row: unknown } | null;
  /** Rows repeated within one answer's slice (dropped). */
  repeated: number;
}

export function newPagingStats(): PagingStats {
  return { requests: 0, splits: 0, rejected: new Map(), rejectedExample: null, repeated: 0 };
}

/** Every rejected row of `stats`, by reason. */
export function rejectedTotals(stats: PagingStats): Partial<Record<RejectReason, number>> {
  const out: Partial<Record<RejectReason, number>> = {};
  for (const byReason of stats.rejected.values()) addRejected(out, byReason);
  return out;
}

/** Adds the counts of `more` to `into`. */
export function addRejected(into: Partial<Record<RejectReason, number>>, more: Partial<Record<RejectReason, number>>): void {
  for (const reason of REJECT_REASONS) if (more[reason]) into[reason] = (into[reason] ?? 0) + more[reason];
}
