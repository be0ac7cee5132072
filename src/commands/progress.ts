import { setStatusLine, type StatusLine } from '../log.js';
import type { ProgressEvent } from '../run/export-windows.js';

/** Carriage return and ANSI "erase the whole line": the cursor is back at column 0 of an empty line. */
const CLEAR_LINE = '\r\x1b[2K';

/**
 * One status line on a TTY (stderr): windows done/total, requests sent (checks, head searches and
 * window edges before any page), rows written and rows received (pages arrive before their rows
 * can be written in order), rows/s (received), ETA. Redrawn at most
 * every 200 ms; nothing at all when stderr is not a TTY (logs are the record there). While it is
 * shown, log lines clear it, print, and it is drawn again below them (see setStatusLine).
 */
export class ProgressLine implements StatusLine {
  private total = 0;
  private done = 0;
  private failed = 0;
  private rows = 0;
  private requests = 0;
  private received = 0;
  private readonly started = Date.now();
  private lastDraw = 0;
  /** The text on the terminal now ('' when nothing is shown). */
  private shown = '';
  private begun = false;
  private finished = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  get enabled(): boolean {
    return this.out.isTTY === true;
  }

  setTotal(windows: number): void {
    this.total = windows;
    this.begun = true;
    if (this.enabled && !this.finished) setStatusLine(this);
    this.draw(true);
  }

  print(write: () => void): void {
    if (!this.shown) return write();
    this.out.write(CLEAR_LINE);
    this.shown = '';
    write();
    this.draw(true);
  }

  on(event: ProgressEvent): void {
    if (event.kind === 'request') this.requests++;
    else if (event.kind === 'received') this.received += event.rows;
    else if (event.kind === 'rows') this.rows += event.rows;
    else if (event.kind === 'unit-done') this.done++;
    else this.failed++;
    this.draw(event.kind === 'unit-done' || event.kind === 'unit-failed');
  }

  /** Draws the final state (when a plan was shown) and leaves it on its own line; later calls do nothing. */
  finish(): void {
    if (!this.enabled || this.finished) return;
    setStatusLine(null);
    if (!this.begun) {
      this.finished = true;
      return;
    }
    this.draw(true);
    this.finished = true;
    this.out.write('\n');
  }

  private draw(force: boolean): void {
    // Requests before the plan (head searches) are counted, and shown once there is a plan.
    if (!this.enabled || this.finished || !this.begun) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 200) return;
    this.lastDraw = now;
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = this.received / seconds;
    const finished = this.done + this.failed;
    const eta = finished > 0 && finished < this.total ? ((this.total - finished) * seconds) / finished : 0;
    const width = 24;
    const filled = this.total > 0 ? Math.round((finished / this.total) * width) : 0;
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
    const line =
      `[${bar}] ${finished}/${this.total} windows` +
      (this.failed ? ` (${this.failed} failed)` : '') +
      ` | ${this.requests.toLocaleString('en-US')} requests` +
      ` | ${this.rows.toLocaleString('en-US')} rows (${this.received.toLocaleString('en-US')} received)` +
      ` | ${Math.round(rate).toLocaleString('en-US')} rows/s` +
      (eta > 0 ? ` | ETA ${formatSeconds(eta)}` : '');
    this.shown = line.padEnd(this.out.columns ? this.out.columns - 1 : line.length);
    this.out.write(`\r${this.shown}`);
  }
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.ceil(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
