/**
 * Rows that failed to decode, counted per table and reason (issue 45 item 2). Every row of a
 * dataset that decodes (transactions with `decode: true`, events) carries `decode_status`: 'ok',
 * 'no_calldata' (a plain transfer: nothing to decode), 'no_abi' or 'error: <reason>'. A window
 * counts its rows by status as it writes them (tallyRow); the report sums them per table
 * (src/run/decode-report.ts) and warns of every table with rows not decoded.
 */
import type { AbiEvent, AbiParameter } from 'viem';
import type { Row } from '../columns/columns.js';
import type { ExportWindow } from './export-window.js';

/** The rows of one chain's window (or of a table, summed) by decode status. */
export interface DecodeTally {
  table: string;
  /** Rows by decode_status: 'ok', 'no_calldata', 'no_abi', 'error: <reason>'. */
  statuses: Record<string, number>;
  /**
   * Events: rows not decoded whose logs carry more indexed topics (after topic0) than the
   * signature marks `indexed`: the most topics seen, and the signature written with them marked.
   */
  unmarked?: { topics: number; marked: number; signature: string };
}

/** Statuses that are not a failure to decode. */
const DECODED = new Set(['ok', 'no_calldata']);

/** Rows of a tally that failed to decode. */
export function undecodedRows(t: DecodeTally): number {
  return Object.entries(t.statuses).reduce((n, [status, count]) => n + (DECODED.has(status) ? 0 : count), 0);
}

/** Counts a row written by `u` under its decode status (rows without one, e.g. decode off, are not counted). */
export function tallyRow(tallies: Map<number, DecodeTally>, u: ExportWindow, row: Row, record: unknown): void {
  const status = row.decode_status;
  if (typeof status !== 'string') return;
  const t = tallies.get(u.chainId) ?? { table: u.table ?? u.dataset.name, statuses: {} };
  tallies.set(u.chainId, t);
  t.statuses[status] = (t.statuses[status] ?? 0) + 1;
  if (DECODED.has(status)) return;
  const event = eventOf(u.target);
  const topics = (record as { topics?: unknown }).topics;
  if (!event || !Array.isArray(topics)) return;
  const marked = event.inputs.filter((p) => (p as { indexed?: boolean }).indexed === true).length;
  const seen = topics.length - 1;
  if (seen > marked && seen <= event.inputs.length && seen > (t.unmarked?.topics ?? 0))
    t.unmarked = { topics: seen, marked, signature: markedSignature(event, seen) };
}

/** The decoder's event of an events target (null for other targets). */
function eventOf(target: unknown): AbiEvent | null {
  const decoder = (target as { decoder?: { event?: AbiEvent } } | null)?.decoder;
  return decoder?.event && Array.isArray(decoder.event.inputs) ? decoder.event : null;
}

/**
 * The event's signature with its first `indexed` parameters marked `indexed` (ERC-20's and
 * ERC-721's Transfer, most events: the indexed ones come first; the contract's ABI says which).
 * Unnamed parameters stay unnamed, so the table keeps its column names (arg_0, arg_1 ...).
 */
export function markedSignature(event: AbiEvent, indexed: number): string {
  const param = (p: AbiParameter, i: number): string =>
    [p.type, ...(i < indexed ? ['indexed'] : []), ...(p.name ? [p.name] : [])].join(' ');
  return `${event.name}(${event.inputs.map(param).join(', ')})`;
}

/** Adds `from` to `into` (same table). */
export function addTally(into: DecodeTally, from: DecodeTally): void {
  for (const [status, n] of Object.entries(from.statuses)) into.statuses[status] = (into.statuses[status] ?? 0) + n;
  if (from.unmarked && from.unmarked.topics > (into.unmarked?.topics ?? 0)) into.unmarked = { ...from.unmarked };
}
