import type { ProgressEvent } from '../run/export-units.js';

/**
 * One status line on a TTY (stderr): windows done/total, rows, rows/s, ETA. Redrawn at most
 * every 200 ms; nothing at all when stderr is not a TTY (logs are the record there).
 */
export class ProgressLine {
  private total = 0;
  private done = 0;
  private failed = 0;
  private rows = 0;
  private readonly started = Date.now();
  private lastDraw = 0;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  get enabled(): boolean {
    return this.out.isTTY === true;
  }

  setTotal(windows: number): void {
    this.total = windows;
    this.draw(true);
  }

  on(event: ProgressEvent): void {
    if (event.kind === 'rows') this.rows += event.rows;
    else if (event.kind === 'unit-done') this.done++;
    else this.failed++;
    this.draw(event.kind !== 'rows');
  }

  finish(): void {
    if (!this.enabled) return;
    this.draw(true);
    this.out.write('\n');
  }

  private draw(force: boolean): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 200) return;
    this.lastDraw = now;
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = this.rows / seconds;
    const finished = this.done + this.failed;
    const eta = finished > 0 && finished < this.total ? ((this.total - finished) * seconds) / finished : 0;
    const width = 24;
    const filled = this.total > 0 ? Math.round((finished / this.total) * width) : 0;
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
    const line =
      `[${bar}] ${finished}/${this.total} windows` +
      (this.failed ? ` (${this.failed} failed)` : '') +
      ` | ${this.rows.toLocaleString('en-US')} rows | ${Math.round(rate).toLocaleString('en-US')} rows/s` +
      (eta > 0 ? ` | ETA ${formatSeconds(eta)}` : '');
    this.out.write(`\r${line.padEnd(this.out.columns ? this.out.columns - 1 : line.length)}`);
  }
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
