import type { TableCommitted } from '../iceberg/index.js';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { ProgressEvent } from './export-windows.js';

/**
 * `output.format: iceberg`: the job's tables committed while a run exports (every
 * output.iceberg_commit_interval, so readers of a long back-fill see its windows as they complete)
 * and once at its end, which decides: a commit during the run that fails (a lost race, the store)
 * is logged and left to the next one.
 *
 * Windows the run exports again (a reorganisation repair, --force, --rewind, --repair) replace
 * completed ones: no commit is made during the run until every one of them is done, so each such
 * replacement reaches readers as one snapshot, never half a repair (windows of two branches).
 */
export class TableCommits {
  private readonly done: TableCommitted[] = [];
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The run's windows that replace completed ones and are not done yet, by unit. */
  private readonly replacing = new Map<string, Interval[]>();

  constructor(
    private readonly commit: () => Promise<TableCommitted[]>,
    private readonly logger: Logger,
  ) {}

  /**
   * Commits every `intervalMs` until finish() (0: none before it). `windows`: what the run exports;
   * `exported`: what the state held before it (a window overlapping it replaces completed windows).
   */
  start(intervalMs: number, windows: readonly ({ unitKey: string } & Interval)[], exported: ReadonlyMap<string, Interval[]>): void {
    for (const w of windows) {
      if (!(exported.get(w.unitKey) ?? []).some((e) => e.start < w.end && w.start < e.end)) continue;
      const list = this.replacing.get(w.unitKey) ?? [];
      list.push({ start: w.start, end: w.end });
      this.replacing.set(w.unitKey, list);
    }
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => this.during(), intervalMs);
    this.timer.unref();
  }

  /** Follows the run's progress: a window done or failed no longer holds the commits back. */
  onProgress(e: ProgressEvent): void {
    if (e.kind !== 'unit-done' && e.kind !== 'unit-failed') return;
    const list = this.replacing.get(e.unitKey);
    if (!list) return;
    const left = list.filter((w) => !(e.start <= w.start && w.end <= e.end));
    if (left.length > 0) this.replacing.set(e.unitKey, left);
    else this.replacing.delete(e.unitKey);
  }

  private during(): void {
    if (this.running || this.replacing.size > 0) return;
    this.running = this.commit()
      .then(
        (committed) => void this.done.push(...committed),
        (err: Error) =>
          this.logger.warn({ err: err.message }, 'Iceberg tables not committed during the run; the end of the run commits them'),
      )
      .finally(() => (this.running = null));
  }

  /** Stops the commits during the run, waits for one in progress, and commits once more: every commit of the run. */
  async finish(): Promise<TableCommitted[]> {
    await this.stop();
    this.done.push(...(await this.commit()));
    return this.done;
  }

  /** Stops the commits during the run and waits for one in progress (a run that fails ends so). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
