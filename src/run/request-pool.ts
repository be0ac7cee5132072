import type { RequestPool } from '../source/paginator.js';

/**
 * Rows all windows together may have requested ahead of what they consume (memory bound): 12
 * pages at the largest limit, what the request slots plus one per window allowed at the defaults.
 */
export const ROWS_AHEAD = 12_000;

/**
 * The run's pool of page requests (see RequestPool). Two bounds, on two different things:
 * - requests in flight: speculative pages are sent while fewer than the client's request slots
 *   plus one per paging window are on the wire (so a window busy writing a page does not leave a
 *   slot idle, and few requests queue in the client);
 * - rows ahead: sent but not yet consumed, answered or not, at most ROWS_AHEAD rows' worth.
 * An answer waiting for its window (pages are consumed in order) holds memory, not a request
 * slot: when a window's earlier slice comes back full and must be cut, its slices still find
 * slots while the later pages it already holds wait.
 * Small pages on a slow service get deep pipelines, shared by the windows that can use them;
 * big pages stay near one page ahead per window.
 */
export class RunRequestPool implements RequestPool {
  windows = 0;
  private inFlight = 0;
  private outstanding = 0;
  constructor(private readonly slots: number) {}

  tryTake(rowsPerRequest: number): boolean {
    if (this.inFlight >= this.slots + this.windows) return false;
    if (this.outstanding >= Math.floor(ROWS_AHEAD / Math.max(1, rowsPerRequest))) return false;
    this.take();
    return true;
  }

  take(): void {
    this.inFlight++;
    this.outstanding++;
  }

  answered(): void {
    this.inFlight--;
  }

  give(answered: boolean): void {
    this.outstanding--;
    if (!answered) this.inFlight--;
  }

  /** Requests on the wire and requests not yet consumed (for tests and probes). */
  get counts(): { inFlight: number; outstanding: number } {
    return { inFlight: this.inFlight, outstanding: this.outstanding };
  }
}
