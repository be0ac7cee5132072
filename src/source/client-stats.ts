/**
 * What a client counted: attempts, retries, 429s, failures, bytes received, by chain, and the
 * answers that proved nothing. The run's report adds them up (src/run/report.ts).
 */
import type { BadAnswerCounts } from './bad-answers.js';

export interface ClientStats {
  /** HTTP attempts sent (first tries and retries). */
  requests: number;
  /** Attempts that were retries. */
  retries: number;
  /** 429 answers received. */
  status429: number;
  /** Calls that ended in an error (after any retries). */
  failures: number;
  /** Response body bytes received. */
  bytesReceived: number;
  /**
   * By chain id, the attempts and retries of requests that named that chain (chain_id parameters):
   * a request for several chains counts for each of them, so these add up to more than the totals
   * when requests share chains; a request that names no chain counts for none.
   */
  byChain: Map<number, ChainRequestFigures>;
  /** Answers not taken as a proof and asked again (src/source/bad-answers.ts), by reason. */
  badAnswers: BadAnswerCounts;
}

export interface ChainRequestFigures {
  requests: number;
  retries: number;
}

/** A client's figures before its first request. */
export function newClientStats(): ClientStats {
  return { requests: 0, retries: 0, status429: 0, failures: 0, bytesReceived: 0, byChain: new Map(), badAnswers: {} };
}
