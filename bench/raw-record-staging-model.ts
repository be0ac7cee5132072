/**
 * Issue 17, the raw-staging lever at the record level: a trial of this session, measured and NOT
 * adopted. The model of the last session (bench/raw-staging-model.ts) showed that DuckDB reads
 * records one per line as cheaply as today's staged NDJSON, so the idea was to stage each record's
 * own text, cut from the answer's body, with the values it does not hold (item_id, chain_id as a
 * number, block_time, wallet_address, the decoded columns) appended under "~" keys, and have the
 * COPY take coalesce("~col", "col"): no row is re-encoded by JSON.stringify. The prototype ran in
 * the exporter (client -> rows -> DuckDB writer, a page falling back to today's encoder when any
 * record could not go raw) and its Parquet files equalled today's row for row and in order; this
 * script keeps its two parts and measures them against today's page encoder on the same rows:
 *
 *   npx tsx bench/raw-record-staging-model.ts [pages, default 20]
 *
 *  - scan: the spans of the `data` array's elements in the body text (strings skipped by indexOf),
 *    with the checks that make a record's text read back the same in DuckDB (no \u escape, integers
 *    only, one line, as many members as JSON.parse saw);
 *  - raw line: per column, the row's value against the parsed record's member of the same name (the
 *    same: read from the record's text; else appended), then the page's lines joined. The per-value
 *    column checks of the NDJSON encoder are left out here (they cost the prototype ~3 µs/row more);
 *  - today: createNdjsonEncoder (per-value checks + JSON.stringify), what the DuckDB writer stages.
 * Both staged texts are also converted by DuckDB and the two Parquet files compared (EXCEPT ALL both
 * ways, and row order).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Column, Row } from '../src/columns/columns.js';
import { transactionsDataset } from '../src/datasets/transactions.js';
import { duckdbType } from '../src/sink/column-types.js';
import { copyStatement, sqlIdentifier, sqlString } from '../src/sink/parquet-duckdb.js';
import { createNdjsonEncoder } from '../src/sink/row-values.js';
import { normaliseListResponse } from '../src/source/response-records.js';
import type { TransactionRecord } from '../src/source/records.js';
import { decodingWalletTarget, sandboxPageBodies } from './sandbox-transaction-rows.js';

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const LETTER_U = 117;

/** Characters of a number other than an integer's: '.', 'e', 'E', '+'. */
function isNonIntegerNumberChar(text: string, i: number, c: number): boolean {
  if (c === 46 || c === 43 || c === 69) return true;
  // 'e' is also in true/false: an exponent follows a digit.
  if (c === 101) {
    const before = text.charCodeAt(i - 1);
    return before >= 48 && before <= 57;
  }
  return false;
}

/**
 * Spans of the elements of the top-level `data` array of a list answer's text, as
 * [start, end, members, plain] per element (plain: no \u escape, integers only, one line), or null when the
 * text is not an object whose last top-level `data` member is an array. The text must already have
 * been accepted by JSON.parse: only strings are skipped, nothing is validated.
 */
function dataElements(text: string): number[] | null {
  const n = text.length;
  let depth = 0;
  let i = 0;
  let lastData = -1;
  // Top level: find the last `"data":` member (JSON.parse keeps the last of repeated keys).
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (depth === 1 && end - i === 5 && text.startsWith('"data"', i)) {
        let j = end + 1;
        while (text.charCodeAt(j) <= 32) j++;
        if (text.charCodeAt(j) === COLON) lastData = j + 1;
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
    i++;
  }
  if (lastData < 0) return null;
  i = lastData;
  while (text.charCodeAt(i) <= 32) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return null;
  i++;
  const out: number[] = [];
  depth = 0;
  let start = -1;
  let members = 0;
  let plain = true;
  // The next backslash at or after i (n when none): found once per backslash, not per string.
  let backslash = text.indexOf('\\', i);
  if (backslash < 0) backslash = n;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (backslash < i) {
        backslash = text.indexOf('\\', i);
        if (backslash < 0) backslash = n;
      }
      // Escapes other than \uXXXX read the same everywhere; \u can be half a surrogate pair.
      while (backslash < end) {
        if (text.charCodeAt(backslash + 1) === LETTER_U) plain = false;
        backslash = text.indexOf('\\', backslash + 2);
        if (backslash < 0) backslash = n;
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0) {
        start = i;
        members = 0;
        plain = c === OPEN_OBJECT;
      }
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 0) return out;
      depth--;
      if (depth === 0) out.push(start, i + 1, members, plain ? 1 : 0);
    } else if (depth === 0) {
      if (c !== COMMA && c > 32) {
        // A scalar element (not an object): recorded as not plain.
        start = i;
        while (i < n && text.charCodeAt(i) !== COMMA && text.charCodeAt(i) !== CLOSE_ARRAY) i++;
        out.push(start, i, 0, 0);
        continue;
      }
    } else if (depth === 1 && c === COLON) {
      members++;
    } else if (plain && (c === 10 || c === 13 || isNonIntegerNumberChar(text, i, c))) {
      // A line break would end the record early in a newline-delimited file.
      plain = false;
    }
    i++;
  }
  return null;
}

/** Index of the quote that closes the string opening at `open`. */
function stringEnd(text: string, open: number): number {
  let j = text.indexOf('"', open + 1);
  while (text.charCodeAt(j - 1) === BACKSLASH) {
    let k = j - 1;
    while (text.charCodeAt(k) === BACKSLASH) k--;
    if ((j - 1 - k) % 2 === 0) break;
    j = text.indexOf('"', j + 1);
  }
  return j;
}

/** The text of each element of the body's `data` array that reads back the same in DuckDB, or null. */
function rawTexts(text: string, parsed: unknown[]): (string | null)[] | null {
  const spans = dataElements(text);
  if (!spans || spans.length !== parsed.length * 4) return null;
  return parsed.map((p, k) =>
    spans[4 * k + 3] === 1 && spans[4 * k + 2]! > 0 && Object.keys(p as object).length === spans[4 * k + 2]
      ? text.slice(spans[4 * k]!, spans[4 * k + 1]!)
      : null,
  );
}

const SPLICED = '~';

/** The raw line of a row (see the header), or undefined when the row must be encoded as today. */
function rawLineEncoder(columns: readonly Column[], spliced: boolean[]) {
  const names = columns.map((c) => c.name);
  const keys = columns.map((c) => `,${JSON.stringify(SPLICED + c.name)}:`);
  return (row: Row, parsed: Record<string, unknown>, text: string): string | undefined => {
    let extra = '';
    for (let i = 0; i < names.length; i++) {
      const v = row[names[i]!];
      const w = parsed[names[i]!];
      if (v === undefined) return undefined;
      if (v === null) {
        if (w === undefined || w === null) continue;
        return undefined;
      }
      if (w === v) continue;
      extra += keys[i]! + JSON.stringify(v);
      spliced[i] = true;
    }
    return extra === '' ? text : `${text.slice(0, -1)}${extra}}`;
  };
}

const { wallet, bodies } = await sandboxPageBodies(300_000, Number(process.argv[2] ?? 20));
const target = decodingWalletTarget(wallet);
const columns = transactionsDataset.columns(target);
const pages = bodies.map((body) => {
  const json = JSON.parse(body) as { data: Record<string, unknown>[] };
  const records = normaliseListResponse(json, 'model', 'transactions', false).data as TransactionRecord[];
  return { body, parsed: json.data, rows: records.map((r) => transactionsDataset.toRow(r, target)) };
});
const rows = pages.reduce((n, p) => n + p.rows.length, 0);
const cpuUs = (fn: () => void) => {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) / rows).toFixed(2).padStart(6);
};

let texts: (string | null)[][] = [];
let todayText = '';
let rawText = '';
const spliced = columns.map(() => false);
for (let round = 0; round < 4; round++) {
  const scan = cpuUs(() => {
    texts = pages.map((p) => rawTexts(p.body, p.parsed) ?? p.parsed.map(() => null));
  });
  const encode = createNdjsonEncoder(columns);
  const today = cpuUs(() => {
    todayText = pages.map((p) => encode(p.rows, 0)).join('');
  });
  const line = rawLineEncoder(columns, spliced);
  const raw = cpuUs(() => {
    rawText = pages
      .map((p, k) => {
        const lines = p.rows.map((row, r) => {
          const t = texts[k]![r];
          return (t && line(row, p.parsed[r]!, t)) ?? encode([row], 0).slice(0, -1);
        });
        return `${lines.join('\n')}\n`;
      })
      .join('');
  });
  console.log(`round ${round + 1}: scan ${scan} + raw lines ${raw} µs/row against today's encoder ${today} µs/row`);
}
const rawCount = texts.flat().filter((t) => t !== null).length;
console.log(
  `${bodies.length} pages, ${rows} rows, ${rawCount} with a raw text; staged ${todayText.length} chars today, ${rawText.length} raw`,
);

// The same Parquet file from both staged texts.
const dir = mkdtempSync(join(tmpdir(), 'insight-raw-records-'));
const db = await DuckDBInstance.create(':memory:', { threads: '1', preserve_insertion_order: 'true' });
const connection = await db.connect();
writeFileSync(join(dir, 'today.ndjson'), todayText);
writeFileSync(join(dir, 'raw.ndjson'), rawText);
await connection.run(copyStatement(columns, join(dir, 'today.ndjson'), join(dir, 'today.parquet'), 'zstd', 4096));
const declared = columns
  .flatMap((c, i) => [c.name, ...(spliced[i] ? [SPLICED + c.name] : [])].map((n) => `${sqlString(n)}: ${sqlString(duckdbType(c))}`))
  .join(', ');
const select = columns
  .map((c, i) => {
    const v = spliced[i] ? `coalesce(${sqlIdentifier(SPLICED + c.name)}, ${sqlIdentifier(c.name)})` : sqlIdentifier(c.name);
    return `CAST(${v} AS ${duckdbType(c)}) AS ${sqlIdentifier(c.name)}`;
  })
  .join(', ');
await connection.run(
  `COPY (SELECT ${select} FROM read_json(${sqlString(join(dir, 'raw.ndjson'))}, format = 'newline_delimited', columns = {${declared}})) ` +
    `TO ${sqlString(join(dir, 'raw.parquet'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096)`,
);
const count = async (sql: string) => Number((await connection.runAndReadAll(sql)).getRows()[0]![0]);
const [a, b] = [sqlString(join(dir, 'today.parquet')), sqlString(join(dir, 'raw.parquet'))];
const differing =
  (await count(`SELECT count(*) FROM (SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b})`)) +
  (await count(`SELECT count(*) FROM (SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a})`));
const inOrder = await count(
  `SELECT count(*) FROM (SELECT row_number() OVER () AS n, item_id FROM ${a}) x JOIN (SELECT row_number() OVER () AS n, item_id FROM ${b}) y USING (n, item_id)`,
);
console.log(`Parquet rows that differ: ${differing}; rows at the same position: ${inOrder} of ${rows}`);
connection.closeSync();
db.closeSync();
rmSync(dir, { recursive: true, force: true });
