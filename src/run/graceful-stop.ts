/**
 * A run told to stop (SIGINT, SIGTERM: `signal` of runJob) stops paging at once (no batch starts,
 * no request is sent, requests in flight are cancelled), then commits within the grace period
 * (the `stop_grace` setting) what it has wholly received: every batch whose pages are all in, and
 * of each batch still paging the part below where its rows are proven (src/run/stop-cut.ts). At the
 * end of the grace period every commit not done yet is abandoned: it stops before its next upload
 * and the run removes what it uploaded (WindowState.cleanPending), so nothing half-written stays.
 * The run then ends "interrupted" (exit 130), its report's `stop` saying what it kept and what it
 * abandoned. The command exits regardless a little after the grace period (src/commands/run.ts):
 * a step that does not stop must not keep the process, and the commit protocol makes that safe.
 */
import type { Logger } from '../log.js';
import type { WindowOutcome } from './export-windows.js';

/** What a stopped run kept and abandoned (RunReport.stop). */
export interface StopSummary {
  /** What stopped the run (SIGINT, SIGTERM, or the reason a library caller gave). */
  signal: string;
  grace_s: number;
  /** When the grace period ended (or would have: the run may have ended before). */
  deadline: string;
  /** The grace period ended before the run's commits did: what was not committed by then was abandoned. */
  grace_expired: boolean;
  /** Planned windows committed whole after the signal (their rows were all in). */
  windows_committed: number;
  /** Windows of which the part received was committed (their rest abandoned: counted in windows_abandoned). */
  windows_cut: number;
  /** The run's abandoned windows (its report's windows.abandoned). */
  windows_abandoned: number;
  /** Rows committed after the signal. */
  rows_committed: number;
}

export class GracefulStop {
  private stoppedAt: number | null = null;
  private expired = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly onStop = () => this.begin();
  private readonly grace = new AbortController();

  constructor(
    private readonly stop: AbortSignal | undefined,
    private readonly graceMs: number,
    private readonly logger: Logger,
  ) {
    if (stop?.aborted) this.begin();
    else stop?.addEventListener('abort', this.onStop, { once: true });
  }

  /** Aborted when commits stop too: the grace period ended, or `lost` was (the lease). */
  abandonOn(lost: AbortSignal): AbortSignal {
    return AbortSignal.any([this.grace.signal, lost]);
  }

  private get deadline(): number {
    return (this.stoppedAt ?? Date.now()) + this.graceMs;
  }

  private begin(): void {
    this.stoppedAt = Date.now();
    this.logger.warn(
      { signal: this.reason(), grace_s: this.graceMs / 1000, deadline: new Date(this.deadline).toISOString() },
      'stopping: no new requests; what is wholly received is committed until the deadline, the rest abandoned (a second signal stops at once)',
    );
    this.timer = setTimeout(() => {
      this.expired = true;
      this.logger.warn({ grace_s: this.graceMs / 1000 }, 'stopping: the grace period is over; commits not done yet are abandoned');
      this.grace.abort(new Error('the grace period of the stop is over'));
    }, this.graceMs);
    this.timer.unref();
  }

  private reason(): string {
    const r: unknown = this.stop?.reason;
    return typeof r === 'string' ? r : r instanceof Error ? r.message : 'stopped';
  }

  /** What the stop kept and abandoned, when the run was stopped (undefined otherwise); logged once. */
  summary(outcomes: readonly WindowOutcome[]): StopSummary | undefined {
    if (this.stoppedAt === null) return undefined;
    const kept = outcomes.filter((o) => o.duringStop === true);
    const summary: StopSummary = {
      signal: this.reason(),
      grace_s: this.graceMs / 1000,
      deadline: new Date(this.deadline).toISOString(),
      grace_expired: this.expired,
      windows_committed: kept.filter((o) => o.status === 'done').length,
      windows_cut: kept.filter((o) => o.status === 'abandoned').length,
      windows_abandoned: outcomes.filter((o) => o.status === 'abandoned').length,
      rows_committed: kept.reduce((n, o) => n + o.rows, 0),
    };
    this.logger.warn({ ...summary }, 'stopped: windows committed during the stop, and abandoned (the next run exports them)');
    return summary;
  }

  /** The run report's `stop`, when the run was stopped. */
  reported(outcomes: readonly WindowOutcome[]): { stop?: StopSummary } {
    const stop = this.summary(outcomes);
    return stop ? { stop } : {};
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.stop?.removeEventListener('abort', this.onStop);
  }
}
