/**
 * A list page's records as the service sent them. When every field of every normalised record is
 * the value the wire carried (the contract's encodings: nothing converted, lowercased or filled
 * in), the records' own JSON text is a faithful copy of them, and a sink may stage those bytes as
 * they are instead of encoding each row again (the DuckDB engine does: its JSON reader is C++).
 * Each such record carries its page and its position in it; a record of any other page carries
 * nothing, and is written from its row as before.
 */

/** The members of a page's top-level `data` array, as received: `{…},{…}` without the brackets. */
export interface WirePage {
  readonly members: Buffer;
  /** Records in `members`. */
  readonly count: number;
}

/** A record's (or its row's) page and position in it; kept beside the object, not on it. */
export interface WireSource {
  page: WirePage;
  index: number;
}

const sources = new WeakMap<object, WireSource>();

/** The page a record or row came from as received, and its position there, if it did. */
export function wireSourceOf(o: object): WireSource | undefined {
  return sources.get(o);
}

/** A row built from a record carries the record's page and position. */
export function carryWireSource(from: object, to: object): void {
  const source = sources.get(from);
  if (source !== undefined) sources.set(to, source);
}

/** Marks a record as the `index`-th of `page` (tests build pages this way too). */
export function markWireSource(record: object, page: WirePage, index: number): void {
  sources.set(record, { page, index });
}

type Obj = Record<string, unknown>;

/**
 * True when each field of `record` (its `decoded` object aside, which a sink never reads from the
 * wire) is what `wire` carried: the same string or number, a null the wire left out or sent as
 * null, or a chain_id the wire sent as its decimal text (a JSON reader's cast gives the number).
 */
function sameAsWire(wire: Obj, record: Obj): boolean {
  for (const key in record) {
    const value = record[key];
    const sent = wire[key];
    if (value === sent || key === 'decoded') continue;
    if (value === null && sent === undefined) continue;
    if (key === 'chain_id' && typeof sent === 'string' && String(value) === sent) continue;
    return false;
  }
  return true;
}

/**
 * Where the top-level `data` array of a body is: the index of its `[` and one past its `]`. A
 * candidate (the `[` after the first `"data":`, one of the last `]`) is proved by parsing the body
 * with an empty array in its place: the same members around it, and `data` empty at the top level.
 */
function dataArraySpan(text: string, json: Obj): [start: number, end: number] | undefined {
  const key = text.indexOf('"data"');
  if (key < 0) return undefined;
  let start = key + 6;
  while (start < text.length && text.charCodeAt(start) !== 0x5b /* [ */) {
    const c = text.charCodeAt(start);
    if (c !== 0x3a /* : */ && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return undefined;
    start++;
  }
  // The members after `data` are few and short: its `]` is one of the last few.
  let end = text.length;
  for (let tries = 0; tries < MAX_TAIL_BRACKETS; tries++) {
    end = text.lastIndexOf(']', end - 1);
    if (end <= start) return undefined;
    if (provesDataArray(text, start, end + 1, json)) return [start, end + 1];
  }
  return undefined;
}

const MAX_TAIL_BRACKETS = 4;

/** Whether the body with `[]` in place of text[start, end) parses to the same members and an empty top-level `data`. */
function provesDataArray(text: string, start: number, end: number, json: Obj): boolean {
  let around: unknown;
  try {
    around = JSON.parse(`${text.slice(0, start)}[]${text.slice(end)}`);
  } catch {
    return false;
  }
  if (typeof around !== 'object' || around === null || Array.isArray(around)) return false;
  const other = around as Obj;
  if (!Array.isArray(other.data) || other.data.length !== 0) return false;
  const keys = Object.keys(json);
  const otherKeys = Object.keys(other);
  if (keys.length !== otherKeys.length || keys.some((k, i) => k !== otherKeys[i])) return false;
  for (const k of keys) if (k !== 'data' && JSON.stringify(json[k]) !== JSON.stringify(other[k])) return false;
  return true;
}

/**
 * Marks `records` (normalised from `json.data`, in order) with their page as received, when the
 * body allows it: ASCII only (character and byte offsets agree, and the bytes are valid UTF-8),
 * no `\u` escape in the array (a lone surrogate reads differently in another JSON reader), and
 * every record the same as its wire object. Returns whether it did.
 */
export function markWirePage(text: string, bytes: Buffer, json: unknown, records: readonly object[]): boolean {
  if (records.length === 0 || bytes.length !== text.length) return false;
  const wire = (json as Obj).data as Obj[];
  if (wire.length !== records.length) return false;
  const span = dataArraySpan(text, json as Obj);
  if (!span) return false;
  const [start, end] = span;
  const escape = text.indexOf('\\u', start);
  if (escape >= 0 && escape < end) return false;
  for (let i = 0; i < records.length; i++) if (!sameAsWire(wire[i]!, records[i] as Obj)) return false;
  const page: WirePage = { members: bytes.subarray(start + 1, end - 1), count: records.length };
  for (let i = 0; i < records.length; i++) markWireSource(records[i]!, page, i);
  return true;
}
