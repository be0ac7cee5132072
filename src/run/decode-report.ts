/**
 * What a run's report says of decoding (issue 45 item 2): per table, its rows by decode status and
 * reason (`decode_status`), and a warning for every stream with rows that failed to decode, saying
 * why and, when the logs carry indexed topics the signature does not mark, how to write the
 * signature. Rows not decoded are written all the same (raw topics and data, null arg_* columns):
 * the run exits 0, the warning is in the report's `warnings`, a warn log line, the summary and the
 * metrics (src/run/metrics.ts), so a scheduler's check of any of them notices.
 */
import type { Logger } from '../log.js';
import { addTally, undecodedRows, type DecodeTally } from './decode-tally.js';
import type { WindowOutcome } from './export-window.js';
import type { RunReport } from './report.js';

/** Per table: rows by decode status ('ok', 'no_calldata', 'no_abi', 'error: <reason>'). */
export type DecodeStatusByTable = Record<string, Record<string, number>>;

/** The report's decode figures of a run's done windows. */
export function decodeReport(outcomes: readonly WindowOutcome[]): {
  decode_status?: DecodeStatusByTable;
  warnings: RunReport['warnings'];
} {
  const byTable = new Map<string, Record<string, number>>();
  const byStream = new Map<string, { tally: DecodeTally; window: [number, number] }>();
  for (const o of outcomes) {
    if (o.status !== 'done' || !o.decode) continue;
    const table = byTable.get(o.decode.table) ?? {};
    byTable.set(o.decode.table, table);
    addTally({ table: o.decode.table, statuses: table }, o.decode);
    const s = byStream.get(o.unitKey);
    if (!s) byStream.set(o.unitKey, { tally: { table: o.decode.table, statuses: {} }, window: [o.start, o.end] });
    const into = byStream.get(o.unitKey)!;
    addTally(into.tally, o.decode);
    into.window = [Math.min(into.window[0], o.start), Math.max(into.window[1], o.end)];
  }
  const warnings = [...byStream.entries()]
    .filter(([, s]) => warnsOf(s.tally))
    .map(([unit, s]) => ({ unit, window: s.window, warning: decodeWarning(s.tally) }));
  if (byTable.size === 0) return { warnings };
  const sorted = [...byTable.keys()].sort();
  return { decode_status: Object.fromEntries(sorted.map((t) => [t, byTable.get(t)!])), warnings };
}

/**
 * A stream warns when its signature is shown wrong (indexed topics it does not mark) or none of
 * its rows that needed decoding decoded; fewer failures (a wallet's calls to contracts of no known
 * ABI, a few odd logs) are counted in decode_status, the summary and the metrics only.
 */
function warnsOf(t: DecodeTally): boolean {
  const failed = undecodedRows(t);
  const needed = Object.entries(t.statuses).reduce((n, [status, count]) => n + (status === 'no_calldata' ? 0 : count), 0);
  return failed > 0 && (t.unmarked !== undefined || failed === needed);
}

/** "table t: 148 of 148 rows not decoded (no_abi 148): <why and what to do>". */
export function decodeWarning(t: DecodeTally): string {
  const rows = Object.values(t.statuses).reduce((a, b) => a + b, 0);
  const failed = undecodedRows(t);
  const reasons = Object.entries(t.statuses)
    .filter(([status]) => status !== 'ok' && status !== 'no_calldata')
    .map(([status, n]) => `${status} ${n}`)
    .join(', ');
  const head = `table ${t.table}: ${failed} of ${rows} rows not decoded (${reasons}); their arg_* columns are null`;
  if (t.unmarked)
    return (
      `${head}: the logs carry ${t.unmarked.topics} indexed topics after topic0, the signature marks ${t.unmarked.marked} parameter(s) indexed: ` +
      `Mark them in the job's event signature, e.g. "${t.unmarked.signature}" (the contract's ABI says which parameters are indexed)` +
      `; the rows already written keep null arg_* columns until their windows are exported again (--force)`
    );
  return `${head}: check the event signature (or abi:) against the contract's ABI`;
}

/** One warn log line per warning of decoding (the report's `warnings` hold them too). */
export function logDecodeWarnings(logger: Logger, report: RunReport): void {
  for (const [table, statuses] of Object.entries(report.decode_status ?? {})) {
    const hints = report.warnings.filter((w) => w.warning.startsWith(`table ${table}:`)).map((w) => w.warning);
    if (hints.length === 0) continue;
    const rows = Object.values(statuses).reduce((a, b) => a + b, 0);
    const failed = undecodedRows({ table, statuses });
    logger.warn({ table, rows, rows_not_decoded: failed, decode_status: statuses, hint: hints[0] }, 'rows not decoded');
  }
}

/** The summary's line per table with rows not decoded. */
export function decodeSummaryLines(report: RunReport): string[] {
  return Object.entries(report.decode_status ?? {}).flatMap(([table, statuses]) => {
    const failed = undecodedRows({ table, statuses });
    if (failed === 0) return [];
    const rows = Object.values(statuses).reduce((a, b) => a + b, 0);
    const reasons = Object.entries(statuses)
      .map(([status, n]) => `${status} ${n}`)
      .join(', ');
    return [`  decode: table ${table}: ${failed} of ${rows} rows NOT DECODED (${reasons})`];
  });
}

/** Decode figures of several reports (run --workers) added up. */
export function mergeDecodeStatus(reports: readonly RunReport[]): { decode_status?: DecodeStatusByTable } {
  const out: DecodeStatusByTable = {};
  for (const r of reports)
    for (const [table, statuses] of Object.entries(r.decode_status ?? {}))
      addTally({ table, statuses: (out[table] ??= {}) }, { table, statuses });
  return Object.keys(out).length > 0 ? { decode_status: out } : {};
}
