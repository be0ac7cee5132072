import type { TableCommitted } from '../iceberg/index.js';
import type { Logger } from '../log.js';

/**
 * `output.format: iceberg`: the job's tables committed while a run exports (every
 * output.iceberg_commit_interval, so readers of a long back-fill see its windows as they complete)
 * and once at its end, which decides: a commit during the run that fails (a lost race, the store)
 * is logged and left to the next one.
 */
export class TableCommits {
  private readonly done: TableCommitted[] = [];
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly commit: () => Promise<TableCommitted[]>,
    private readonly logger: Logger,
  ) {}

  /** Commits every `intervalMs` until finish() (0: none before it). */
  start(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => this.during(), intervalMs);
    this.timer.unref();
  }

  private during(): void {
    if (this.running) return;
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
