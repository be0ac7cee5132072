/**
 * Human-readable output of the read commands: aligned text tables. On a TTY wide tables are fitted
 * to the terminal by shortening the widest cells (marked with `…`); off a TTY (pipes, files) every
 * value is printed in full. Scripts should use `--json`.
 */

export type Cell = string | number | boolean | null | undefined;

export interface TableColumn<T> {
  header: string;
  value(row: T): Cell;
  /** Numbers read better right-aligned. */
  align?: 'left' | 'right';
}

export interface TableOptions {
  /** Fit the table into this many characters (a TTY's width); undefined = never shorten. */
  maxWidth?: number | undefined;
  /** Printed instead of a table without rows. */
  empty?: string;
}

const GAP = '  ';
const MIN_WIDTH = 6;

export function cellText(value: Cell): string {
  if (value === null || value === undefined) return '-';
  return String(value).replace(/[\r\n\t]+/g, ' ');
}

function shorten(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? '…' : `${text.slice(0, width - 1)}…`;
}

/** An aligned table, header first; one line per row. */
export function renderTable<T>(rows: readonly T[], columns: readonly TableColumn<T>[], opts: TableOptions = {}): string {
  if (rows.length === 0) return `${opts.empty ?? '(none)'}\n`;
  const cells = rows.map((row) => columns.map((c) => cellText(c.value(row))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  if (opts.maxWidth !== undefined)
    fit(
      widths,
      columns.map((c) => c.header.length),
      opts.maxWidth,
    );
  const line = (texts: string[]) =>
    texts
      .map((t, i) => {
        const w = widths[i]!;
        const s = shorten(t, w);
        return columns[i]!.align === 'right' ? s.padStart(w) : s.padEnd(w);
      })
      .join(GAP)
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), ...cells.map(line)].join('\n')}\n`;
}

/** Narrows the widest columns, one character at a time, until the table fits (or cannot shrink). */
function fit(widths: number[], headerWidths: number[], maxWidth: number): void {
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1);
  while (total() > maxWidth) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) {
      const floor = Math.max(MIN_WIDTH, Math.min(headerWidths[i]!, 12));
      if (widths[i]! > floor && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    }
    if (widest < 0) return;
    widths[widest]!--;
  }
}

/** `label: value` lines, labels aligned. */
export function renderFields(fields: readonly [string, Cell][]): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return `${fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cellText(v)}`).join('\n')}\n`;
}

/** The width tables are fitted to: the terminal's when stdout is a TTY, else none. */
export function terminalWidth(stream: NodeJS.WriteStream = process.stdout): number | undefined {
  return stream.isTTY ? (stream.columns ?? 120) : undefined;
}
