import type { Column, Row } from '../columns/columns.js';
import { wireSourceOf, type WirePage } from '../source/wire-page.js';
import { duckdbType } from './column-types.js';
import { createLineEncoder } from './row-values.js';
import { MAX_RECORD_BYTES, sqlIdentifier, sqlString } from './sql.js';
import { TextFileStream } from './staging.js';

/** A staged file pair's SELECT list and FROM clause for DuckDB. */
export interface StagedQuery {
  select: string;
  from: string;
}

/** The key of an extras line that says its record is a row of the file. */
const KEEP = '~keep';
const KEPT = `{${JSON.stringify(KEEP)}:true}`;
/** KEPT followed by more members. */
const KEPT_AND = `{${JSON.stringify(KEEP)}:true,`;

function declared(columns: readonly { name: string; type: string }[]): string {
  return columns.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ');
}

/**
 * Staging for the DuckDB engine that copies the records of pages received in the contract's
 * encodings (see source/wire-page.ts) as their bytes, not encoded again row by row:
 *
 *  - `<base>.staged.json`: one JSON array of records: each page as received (all its records,
 *    those of other chains or already written too), or a row's own NDJSON line when it has no page;
 *  - `<base>.staged.extras.ndjson`: one line per record of that array, in step: `{}` for a record
 *    that is not a row of this file, else `~keep` and the columns that are not copies of the
 *    record's fields (item_id, block_time, the decoded columns, ...).
 *
 * DuckDB reads both side by side (POSITIONAL JOIN), keeps the marked records, and takes each
 * column from the record (`wireColumns`) or from its extras line. A page is staged again when the
 * rows of a write come back to an earlier record of it (rows out of the page's order).
 */
export class WireStaging {
  private readonly records: TextFileStream;
  private readonly extras: TextFileStream;
  private readonly extraColumns: Column[];
  private readonly wire: Set<string>;
  private readonly extraLine: (row: Row, r: number, firstRowInFile: number) => string;
  private readonly rowLine: (row: Row, r: number, firstRowInFile: number) => string;
  private started = false;
  /** The page being staged: its extras lines (`{}` until a row of it comes) and its last row's index. */
  private open: { page: WirePage; lines: string[]; last: number } | null = null;

  constructor(
    base: string,
    private readonly columns: readonly Column[],
    wireColumns: readonly string[],
  ) {
    this.wire = new Set(wireColumns);
    this.extraColumns = columns.filter((c) => !this.wire.has(c.name));
    this.records = new TextFileStream(`${base}.staged.json`);
    this.extras = new TextFileStream(`${base}.staged.extras.ndjson`);
    this.extraLine = createLineEncoder(this.extraColumns, { subset: true });
    this.rowLine = createLineEncoder(columns);
  }

  get paths(): string[] {
    return [this.records.path, this.extras.path];
  }

  get approxBytes(): number {
    return this.records.approxBytes + this.extras.approxBytes;
  }

  get bytesWritten(): number {
    return this.records.bytesWritten + this.extras.bytesWritten;
  }

  async write(rows: readonly Row[], firstRowInFile: number): Promise<void> {
    let fallback: string[] = [];
    let fallbackExtras: string[] = [];
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const source = wireSourceOf(row);
      const extra = this.extraColumns.length === 0 ? KEPT : KEPT_AND + this.extraLine(row, r, firstRowInFile).slice(1);
      if (source === undefined) {
        if (this.open) await this.flush();
        fallback.push(this.rowLine(row, r, firstRowInFile));
        fallbackExtras.push(extra);
        continue;
      }
      if (fallback.length > 0) {
        await this.stage(fallback.join(','), fallbackExtras.join('\n'));
        fallback = [];
        fallbackExtras = [];
      }
      const { page, index } = source;
      if (this.open && (this.open.page !== page || index <= this.open.last)) await this.flush();
      this.open ??= { page, lines: new Array<string>(page.count).fill('{}'), last: -1 };
      this.open.lines[index] = extra;
      this.open.last = index;
    }
    if (fallback.length > 0) await this.stage(fallback.join(','), fallbackExtras.join('\n'));
  }

  /** Writes what is staged so far and closes both files. */
  async end(): Promise<void> {
    await this.flush();
    await this.records.write(this.started ? ']' : '[]');
    await Promise.all([this.records.end(), this.extras.end()]);
  }

  async destroy(): Promise<void> {
    this.open = null;
    await Promise.all([this.records.destroy(), this.extras.destroy()]);
  }

  /** The columns from the records or the extras lines, each cast to its declared type. */
  query(): StagedQuery {
    const recordColumns = this.columns.filter((c) => this.wire.has(c.name)).map((c) => ({ name: c.name, type: duckdbType(c) }));
    const extraColumns = [{ name: KEEP, type: 'BOOLEAN' }, ...this.extraColumns.map((c) => ({ name: c.name, type: duckdbType(c) }))];
    const select = this.columns
      .map((c) => `CAST(${this.wire.has(c.name) ? 'w' : 'x'}.${sqlIdentifier(c.name)} AS ${duckdbType(c)}) AS ${sqlIdentifier(c.name)}`)
      .join(', ');
    return {
      select,
      from:
        `read_json(${sqlString(this.records.path)}, format = 'array', columns = {${declared(recordColumns)}}, maximum_object_size = ${MAX_RECORD_BYTES}) AS w ` +
        `POSITIONAL JOIN read_json(${sqlString(this.extras.path)}, format = 'newline_delimited', columns = {${declared(extraColumns)}}, ` +
        `maximum_object_size = ${MAX_RECORD_BYTES}) AS x WHERE x.${sqlIdentifier(KEEP)}`,
    };
  }

  private async flush(): Promise<void> {
    const open = this.open;
    if (!open) return;
    this.open = null;
    await this.stage(open.page.members, open.lines.join('\n'));
  }

  /** One or more records (JSON text without brackets) and their extras lines. */
  private async stage(records: Buffer | string, extras: string): Promise<void> {
    await this.records.write(this.started ? ',' : '[');
    this.started = true;
    await this.records.write(records);
    await this.extras.write(`${extras}\n`);
  }
}
