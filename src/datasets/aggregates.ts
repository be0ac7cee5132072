/**
 * The aggregates dataset: the service's `group_by` / `aggregate` rows (`aggregations`) over a
 * wallet's transactions or a contract's events of one signature, computed per window.
 *
 * - Columns: item_id, chain_id, the window bounds, then one column per group expression and one
 *   per aggregate expression, named by the alias or a sanitised expression, typed from the
 *   expression (count -> int64, sum/min/max -> the type of their column, avg -> decimal text).
 * - Values: numbers or decimal strings (the open-source indexer quotes UInt256 results), times
 *   as unix seconds, SQL datetimes or RFC 3339 strings; the rows of a window are written sorted
 *   by their group values, whatever order the service sent them in.
 * - Empty windows: a window without rows has no row, grouped or not. The open-source indexer
 *   answers an ungrouped aggregate over no rows with one row of zeros; every ungrouped query
 *   therefore also asks for `count() AS <ROW_COUNT_KEY>` and a row counting 0 is dropped.
 * - Wallet route: an ungrouped answer of more than one row is the open-source indexer's
 *   from/to UNION ALL (one row per half, self-transfers in both) and a 500 to a grouped
 *   aggregate its failed GROUP BY around that UNION: both end in AggregateWalletUnionError.
 * - Paging: groups come in no order a cursor could follow (GROUP BY without sort_by has none), so
 *   only page 0 is asked for and an answer proves its window only when it holds fewer groups than
 *   the limit. A full answer is never written: the window is halved on the window axis and each
 *   half exported on its own (rows then carry the half's bounds). No window is ever truncated.
 */
import { createHash } from 'node:crypto';
import { ExitCode, InsightExportError, InterruptedError, UserInputError, walk } from '../errors.js';
import { HttpStatusError, tagFailedChain } from '../source/errors.js';
import { snakeCase } from '../decode/columns.js';
import { parseEventSignature, type ParsedEventSignature } from '../abi/event-signature.js';
import type { InsightClient } from '../source/client.js';
import type { ChainDone, PagedBatch } from '../source/paginator.js';
import { MAX_PAGE_AGGREGATED, type Filters, type ListQuery } from '../source/query.js';
import type { AggregationRow } from '../source/records.js';
import { column, isoDate, isoTime, type Column, type ColumnType, type RowOf, type RowValue, type RowWith } from '../columns/columns.js';
import { EVENT_QUERY_FIELDS, TRANSACTION_QUERY_FIELDS } from '../columns/record-fields.js';
import { BLOCK_WINDOW_FILTERS, type Dataset, type TargetOptions, type WindowAxis, type WindowRequest } from './dataset.js';
import { eventTableName } from './events.js';
import type { UnitTargetOf } from './target-kinds.js';

/** What the rows are computed over. */
export type AggregateSource = { kind: 'wallet'; address: string } | { kind: 'contract'; address: string; signature: ParsedEventSignature };

export interface GroupExpression {
  /** As written in the job (sent as `group_by`). */
  expression: string;
  /** Key of the value in an aggregation row: the alias, or the expression. */
  key: string;
  /** Output column; `chain_id` (ungrouped alias) is the fixed chain_id column. */
  name: string;
  type: ColumnType;
}

export interface AggregateExpression {
  expression: string;
  key: string;
  name: string;
  type: ColumnType;
}

export interface AggregateTarget {
  kind: 'aggregates';
  source: AggregateSource;
  groupBy: GroupExpression[];
  aggregates: AggregateExpression[];
  columns: Column[];
  /** Identity of the query (source, filters, expressions): part of every item_id. */
  queryKey: string;
}

/** One aggregation row with the (sub-)window it was computed over. */
export interface AggregateRecord {
  chain_id: number;
  window_start: number;
  window_end: number;
  /** UTC unix seconds of the window start (time axis: the start; block axis: the start block's time). */
  window_start_time: number;
  values: AggregationRow;
}

/** A group_by / aggregate expression in the job that cannot be exported. */
export class AggregateExpressionError extends UserInputError {
  override name = 'AggregateExpressionError';
}

/** A value in an aggregation row that does not fit the column its expression implies. */
export class AggregateValueError extends InsightExportError {
  override name = 'AggregateValueError';
}

/**
 * The wallet route answered an aggregate the way the open-source indexer's UNION ALL of a from-
 * and a to-query does: it cannot be turned into the wallet's numbers exactly.
 */
export class AggregateWalletUnionError extends InsightExportError {
  override name = 'AggregateWalletUnionError';
  /** What the service cannot do: no later run changes it (exit 2). */
  override readonly exitCode: ExitCode = ExitCode.badInput;
}

/** The union error a target met: its other windows end with it at once, without asking again. */
const unionRefused = new WeakMap<AggregateTarget, AggregateWalletUnionError>();

/** Alias of the row count every ungrouped query also asks for (to recognise an empty window). */
export const ROW_COUNT_KEY = 'insight_export_rows';

/** The window cannot be halved further and still has more rows than the page cap allows. */
export class AggregateWindowTooDenseError extends InsightExportError {
  override name = 'AggregateWindowTooDenseError';
}

// ---------------------------------------------------------------------------------------------
// Source columns: what group_by and aggregate expressions may name, with their types

/** Name -> type of the fields a source's expressions may name, in field order (the hint lists them). */
function fieldTypes(fields: readonly Column[]): Record<string, ColumnType> {
  return Object.fromEntries(fields.map((f) => [f.name, f.type]));
}

const TRANSACTION_TYPES = fieldTypes(TRANSACTION_QUERY_FIELDS);
const EVENT_TYPES = fieldTypes(EVENT_QUERY_FIELDS);

/** Columns every aggregates row starts with. */
export const AGGREGATE_FIXED_COLUMNS = [
  column('item_id', 'string', 'Stable unique key: hash of the query, chain, window and group values', false),
  column('chain_id', 'int64', 'Chain id', false),
  column('window_start', 'int64', 'Start of the window the row aggregates (inclusive): block number or unix seconds, as range.by', false),
  column('window_end', 'int64', 'End of the window (exclusive), same unit as window_start', false),
  column(
    'window_start_time',
    'timestamp',
    'UTC time of the window start (block axis: the time of its first block); the date partition',
    false,
  ),
] as const;

/** A row of an aggregates table: its fixed columns, then one per group and aggregate expression. */
type AggregateRow = RowWith<typeof AGGREGATE_FIXED_COLUMNS>;

const FIXED_NAMES = new Set<string>(AGGREGATE_FIXED_COLUMNS.map((c) => c.name));

// ---------------------------------------------------------------------------------------------
// Expressions

const ALIAS_RE = /^(.*?)(?:\s+as\s+([A-Za-z_][A-Za-z0-9_]*))?\s*$/is;
const COLUMN_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TO_DATE_RE = /^toDate\((?:toDateTime\()?([A-Za-z_]\w*)\)?\)$/;
const TO_START_RE = /^toStartOf[A-Za-z]+\((?:toDateTime\()?([A-Za-z_]\w*)\)?\)$/;
const AGGREGATE_RE = /^(count|sum|avg|min|max)\(([A-Za-z0-9_*]*)\)$/i;

interface Where {
  /** For messages: `jobs/x.yaml aggregates.group_by[1]`. */
  field: string;
  fields: Record<string, ColumnType>;
  sourceName: string;
}

function splitAlias(expression: string): { body: string; alias: string | undefined } {
  const m = ALIAS_RE.exec(expression.trim());
  return { body: (m?.[1] ?? expression).trim(), alias: m?.[2] };
}

function outputName(body: string, alias: string | undefined): string {
  if (alias) return alias;
  const name = snakeCase(body);
  if (name === '') return 'expr';
  return /^[0-9]/.test(name) ? `c_${name}` : name;
}

function knownColumn(name: string, where: Where, expression: string): ColumnType {
  const type = where.fields[name];
  if (type === undefined) {
    throw new AggregateExpressionError(`Unknown column "${name}" in ${JSON.stringify(expression)}`, {
      details: where.field,
      hint: `${where.sourceName} columns: ${Object.keys(where.fields).join(', ')}`,
    });
  }
  return type;
}

function parseGroup(expression: string, where: Where): GroupExpression {
  const { body, alias } = splitAlias(expression);
  const compact = body.replace(/\s+/g, '');
  let type: ColumnType;
  let m: RegExpExecArray | null;
  if (COLUMN_RE.test(compact)) type = knownColumn(compact, where, expression);
  else if ((m = TO_DATE_RE.exec(compact))) {
    knownColumn(m[1]!, where, expression);
    type = 'date';
  } else if ((m = TO_START_RE.exec(compact))) {
    knownColumn(m[1]!, where, expression);
    type = 'timestamp';
  } else {
    // An expression this tool does not know: the service decides; its value is kept as text.
    type = 'string';
  }
  return { expression: expression.trim(), key: alias ?? body, name: outputName(body, alias), type };
}

function parseAggregate(expression: string, where: Where): AggregateExpression {
  const { body, alias } = splitAlias(expression);
  const m = AGGREGATE_RE.exec(body.replace(/\s+/g, ''));
  let type: ColumnType = 'string';
  if (m) {
    const fn = m[1]!.toLowerCase();
    const arg = m[2]!;
    const col = arg === '' || arg === '*' ? null : arg;
    const colType = col === null ? null : knownColumn(col, where, expression);
    if (fn === 'count') type = 'int64';
    else if (colType === null) {
      throw new AggregateExpressionError(`${fn}() needs a column in ${JSON.stringify(expression)}`, {
        details: where.field,
        hint: `e.g. "${fn}(gas_used)"`,
      });
    } else if (fn === 'avg') type = 'string';
    else if (fn === 'sum' && colType === 'int32')
      type = 'int64'; // a sum of int32 values may not fit int32
    else if (fn === 'sum' && colType === 'string') {
      throw new AggregateExpressionError(`sum() needs a numeric column in ${JSON.stringify(expression)}`, { details: where.field });
    } else type = colType;
  }
  return { expression: expression.trim(), key: alias ?? body, name: outputName(body, alias), type };
}

export interface AggregateSpec {
  source: AggregateSource;
  groupBy: readonly string[];
  aggregate: readonly string[];
  /** The unit's filter_* values (part of the query identity). */
  filters?: Readonly<Record<string, string>>;
  /** For messages: the job file, and the target the expressions are applied to (`targets[1]`). */
  jobFile?: string;
  targetLabel?: string;
}

/**
 * Checks the job's expressions against the source's columns and derives the output columns.
 * Throws AggregateExpressionError (exit 2) naming the job field.
 */
export function createAggregateTarget(spec: AggregateSpec): AggregateTarget {
  const { fields, sourceName } = routeOf(spec.source);
  const on = spec.targetLabel ? `, applied to ${spec.targetLabel}` : '';
  const at = (list: string, i: number) => `${spec.jobFile ? `${spec.jobFile} ` : ''}aggregates.${list}[${i}]${on}`;
  if (spec.groupBy.length === 0 && spec.aggregate.length === 0) {
    throw new AggregateExpressionError('The aggregates dataset needs group_by and/or aggregate expressions', {
      details: spec.jobFile ? `${spec.jobFile} aggregates` : 'aggregates',
      hint: 'e.g. aggregates: {group_by: [chain_id], aggregate: ["count() as tx_count"]}',
    });
  }
  const groupBy = spec.groupBy.map((e, i) => parseGroup(e, { field: at('group_by', i), fields, sourceName }));
  const aggregates = spec.aggregate.map((e, i) => parseAggregate(e, { field: at('aggregate', i), fields, sourceName }));

  const columns: Column[] = [...AGGREGATE_FIXED_COLUMNS];
  const taken = new Map<string, string>();
  const add = (e: GroupExpression | AggregateExpression, field: string, kind: 'group' | 'aggregate') => {
    if (kind === 'group' && e.name === 'chain_id' && e.type === 'int64') return; // the fixed chain_id column
    const clash = FIXED_NAMES.has(e.name) ? 'a column every aggregates row has' : taken.get(e.name);
    if (clash) {
      throw new AggregateExpressionError(`Column name "${e.name}" of ${JSON.stringify(e.expression)} is already used by ${clash}`, {
        details: field,
        hint: `Give the expression its own alias: "${e.expression} as <name>".`,
      });
    }
    taken.set(e.name, JSON.stringify(e.expression));
    const what = kind === 'group' ? 'Group' : 'Aggregate';
    const note = e.type === 'string' && kind === 'aggregate' && /^avg/i.test(e.key) ? ' (decimal text)' : '';
    columns.push(column(e.name, e.type, `${what} ${e.expression}${note}`));
  };
  groupBy.forEach((g, i) => add(g, at('group_by', i), 'group'));
  aggregates.forEach((a, i) => add(a, at('aggregate', i), 'aggregate'));

  const identity = {
    source: routeOf(spec.source).identity(spec.source),
    filters: Object.entries(spec.filters ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)),
    groupBy: groupBy.map((g) => g.expression),
    aggregate: aggregates.map((a) => a.expression),
  };
  return {
    kind: 'aggregates',
    source: spec.source,
    groupBy,
    aggregates,
    columns,
    queryKey: sha256(JSON.stringify(identity)).slice(0, 16),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Hash of the expressions only: one table per output schema. */
function schemaKey(target: AggregateTarget): string {
  return sha256(JSON.stringify([...target.groupBy, ...target.aggregates].map((e) => [e.name, e.type]))).slice(0, 8);
}

// ---------------------------------------------------------------------------------------------
// Values

const DECIMAL_RE = /^-?(?:0|[1-9][0-9]*)$/;
const SQL_TIME_RE = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:Z|\+00:00)?$/;

function valueError(target: AggregateTarget, name: string, type: ColumnType, value: unknown): AggregateValueError {
  return new AggregateValueError(`The service sent a value that does not fit aggregate column "${name}" (${type})`, {
    details: `${name} = ${JSON.stringify(value)} (query ${target.queryKey})`,
    hint: 'Alias the expression and check its type, or report the response shape.',
  });
}

function cell(value: unknown, type: ColumnType, fail: () => Error): RowValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'int64':
    case 'int32': {
      let n = value;
      if (typeof value === 'string') {
        const text = value.trim();
        const time = SQL_TIME_RE.exec(text); // block_timestamp as a DateTime (RFC 3339 or SQL text)
        n = DECIMAL_RE.test(text) ? Number(text) : time ? Date.parse(`${time[1]}T${time[2]}Z`) / 1000 : value;
      }
      if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw fail();
      return n;
    }
    case 'uint256': {
      if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
      if (typeof value === 'string' && /^[0-9]+$/.test(value.trim())) return BigInt(value.trim()).toString();
      throw fail();
    }
    case 'date': {
      if (typeof value === 'number' && Number.isFinite(value)) return isoDate(value);
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
      throw fail();
    }
    case 'timestamp': {
      if (typeof value === 'number' && Number.isFinite(value)) return isoTime(value);
      const m = typeof value === 'string' ? SQL_TIME_RE.exec(value.trim()) : null;
      if (!m) throw fail();
      return `${m[1]}T${m[2]}Z`;
    }
    case 'bool':
      if (typeof value === 'boolean') return value;
      throw fail();
    default:
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** The value of an expression: by its key, else by the key without spaces or in another case. */
function lookup(values: AggregationRow, key: string): unknown {
  if (Object.hasOwn(values, key)) return values[key];
  const norm = (k: string) => k.replace(/\s+/g, '').toLowerCase();
  const want = norm(key);
  for (const k of Object.keys(values)) if (norm(k) === want) return values[k];
  return undefined;
}

/** The group values of a row as written (one form whatever the service's wire types). */
function groupCells(r: AggregateRecord, target: AggregateTarget): RowValue[] {
  return target.groupBy.map((g) => {
    const value = lookup(r.values, g.key);
    return cell(value, g.type, () => valueError(target, g.name, g.type, value));
  });
}

function itemId(r: AggregateRecord, target: AggregateTarget): string {
  const groups = groupCells(r, target);
  return sha256(JSON.stringify([target.queryKey, r.chain_id, r.window_start, r.window_end, groups])).slice(0, 32);
}

// ---------------------------------------------------------------------------------------------
// Paging

async function fetchPage(
  client: InsightClient,
  target: AggregateTarget,
  chainId: number,
  axis: WindowAxis,
  window: { start: number; end: number },
  filters: Filters,
  limit: number,
): Promise<AggregationRow[]> {
  const bounds = BLOCK_WINDOW_FILTERS[axis];
  const grouped = target.groupBy.length > 0;
  const q: ListQuery = {
    chainIds: [chainId],
    filters: { ...filters, [bounds.gte]: window.start, [bounds.lt]: window.end },
    groupBy: target.groupBy.map((g) => g.expression),
    aggregate: [...target.aggregates.map((a) => a.expression), ...(grouped ? [] : [`count() AS ${ROW_COUNT_KEY}`])],
    limit,
    page: 0,
  };
  return routeOf(target.source).fetch(client, target, target.source, q, chainId, window);
}

/**
 * A wallet's aggregation rows, refusing what the open-source indexer's from/to UNION ALL answers:
 * a 500 to a grouped aggregate, more than one row to an ungrouped one.
 */
async function walletAggregations(
  client: InsightClient,
  target: AggregateTarget,
  address: string,
  q: ListQuery,
  chainId: number,
  window: { start: number; end: number },
): Promise<AggregationRow[]> {
  const grouped = target.groupBy.length > 0;
  const refused = unionRefused.get(target);
  if (refused) throw new AggregateWalletUnionError(refused.shortMessage, { details: refused.details, hint: refused.hint });
  const where = `wallet ${address}, group_by ${(q.groupBy ?? []).join(', ') || '(none)'} (query ${target.queryKey})`;
  const wholeHint = 'export the transactions dataset and aggregate it in the warehouse';
  let rows: AggregationRow[];
  try {
    const known = grouped ? { likelyCause: 'the service cannot group aggregates of a wallet', sameMessageCounts: true } : undefined;
    rows = (await client.walletTransactions(address, q, undefined, known)).aggregations ?? [];
  } catch (err) {
    if (grouped && target.aggregates.length > 0 && walk(err, (e) => e instanceof HttpStatusError)?.status === 500) {
      // A property of the service, the same on every chain and window: the details name none of them.
      const error = new AggregateWalletUnionError(
        'The service cannot group aggregates of a wallet (HTTP 500 to every grouped wallet aggregate)',
        {
          details: where,
          hint: `The open-source indexer fails to GROUP BY around its from/to UNION of a wallet: ${wholeHint}, or aggregate a contract's events instead.`,
          cause: err,
        },
      );
      unionRefused.set(target, error);
      throw error;
    }
    throw err;
  }
  if (!grouped && rows.length > 1) {
    const error = new AggregateWalletUnionError(
      `The service answered ${rows.length} rows to an ungrouped wallet aggregate (one expected)`,
      {
        details: `${where}; first seen on chain ${chainId}, window [${window.start}, ${window.end})`,
        hint: `The open-source indexer aggregates the wallet's outgoing and incoming transactions separately (self-transfers in both), so no exact total can be made of them: ${wholeHint}.`,
      },
    );
    unionRefused.set(target, error);
    throw error;
  }
  return rows;
}

/** What aggregating one kind of source takes: the columns its expressions may name, its names, its request. */
interface SourceRoute<S extends AggregateSource, K extends 'wallet' | 'contract'> {
  fields: Record<string, ColumnType>;
  sourceName: string;
  /** The source of a unit target, and the target as messages name it. */
  source(unit: UnitTargetOf<K>): S;
  label(unit: UnitTargetOf<K>): string;
  /** The source in the query identity, in the default table name, and in file names. */
  identity(s: S): string;
  table(s: S): string;
  key(s: S): string;
  fetch(
    client: InsightClient,
    target: AggregateTarget,
    s: S,
    q: ListQuery,
    chainId: number,
    window: { start: number; end: number },
  ): Promise<AggregationRow[]>;
}

type SourceRoutes = { [K in AggregateSource['kind']]: SourceRoute<Extract<AggregateSource, { kind: K }>, K> };

const SOURCE_ROUTES: SourceRoutes = {
  wallet: {
    fields: TRANSACTION_TYPES,
    sourceName: 'Wallet transaction',
    source: (unit) => ({ kind: 'wallet', address: unit.wallet.toLowerCase() }),
    label: (unit) => `targets[${unit.targetIndex}] (wallet transactions)`,
    identity: (s) => s.address,
    table: () => 'aggregates_transactions',
    key: (s) => s.address,
    fetch: (client, target, s, q, chainId, window) => walletAggregations(client, target, s.address, q, chainId, window),
  },
  contract: {
    fields: EVENT_TYPES,
    sourceName: 'Event',
    source: (unit) => ({ kind: 'contract', address: unit.contract.toLowerCase(), signature: parseEventSignature(unit.event.signature) }),
    label: (unit) => `targets[${unit.targetIndex}] (events ${unit.event.signature})`,
    identity: (s) => `${s.address}:${s.signature.topic0}`,
    table: (s) => `aggregates_${eventTableName(s.signature)}`,
    key: (s) => `${s.address}_${s.signature.topic0.slice(2, 10)}`,
    fetch: async (client, _target, s, q) => (await client.contractEvents(s.address, s.signature.human, q)).aggregations ?? [],
  },
};

/** The route of a source's kind. */
function routeOf<S extends AggregateSource>(s: S): SourceRoute<S, S['kind']> {
  return SOURCE_ROUTES[s.kind] as unknown as SourceRoute<S, S['kind']>;
}

/** The aggregate target of a unit target, its expressions checked (AggregateExpressionError). */
function aggregateTarget(unit: UnitTargetOf<'wallet' | 'contract'>, options: TargetOptions): AggregateTarget {
  const route = SOURCE_ROUTES[unit.kind] as unknown as SourceRoute<AggregateSource, typeof unit.kind>;
  const spec = options.aggregates ?? { group_by: [], aggregate: [] };
  return createAggregateTarget({
    source: route.source(unit),
    groupBy: spec.group_by,
    aggregate: spec.aggregate,
    filters: options.filters,
    jobFile: options.jobFile,
    targetLabel: route.label(unit),
  });
}

/** Sort order of rows by their group values (numbers numerically, decimal strings by value). */
function compareCells(a: RowValue, b: RowValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  if (DECIMAL_RE.test(x) && DECIMAL_RE.test(y)) {
    const d = BigInt(x) - BigInt(y);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  return x < y ? -1 : 1;
}

/** UTC time of the window start: on the block axis, the start block's timestamp (asked once). */
async function windowStartTime(client: InsightClient, chainId: number, axis: WindowAxis, start: number): Promise<number> {
  if (axis === 'time') return start;
  const res = await client.resolve(String(start), { chainIds: [chainId] });
  const block = res.data.blocks.find((b) => b.block_number === start && (b.chain_id === chainId || res.data.blocks.length === 1));
  if (!block) {
    throw new InsightExportError(`Block ${start} of chain ${chainId} is not known to the service`, {
      details: `resolve/${start} (needed for the time of an aggregates window that has rows)`,
      hint: 'Start the range at a block the chain has, or use a time range (dates) for aggregates.',
    });
  }
  return block.block_timestamp;
}

/**
 * The aggregation rows of [start, end) on one chain, in window order: one request when it holds
 * fewer groups than the limit, else the two halves of the window, each on its own.
 */
async function* aggregateWindow(
  client: InsightClient,
  target: AggregateTarget,
  chainId: number,
  req: WindowRequest,
  start: number,
  end: number,
): AsyncGenerator<AggregateRecord[]> {
  if (req.signal?.aborted) throw new InterruptedError(String(req.signal.reason ?? 'signal'));
  const rows = await fetchPage(client, target, chainId, req.axis, { start, end }, req.filters, req.limit);
  if (rows.length >= req.limit) {
    if (end - start <= 1) {
      throw new AggregateWindowTooDenseError(
        `${req.limit} or more aggregation rows in one ${req.axis === 'block' ? 'block' : 'second'} on chain ${chainId}`,
        {
          details: `window [${start}, ${end}) of query ${target.queryKey}`,
          hint: 'Group by fewer or coarser columns, or narrow the job with filters.',
        },
      );
    }
    const mid = start + Math.floor((end - start) / 2);
    yield* aggregateWindow(client, target, chainId, req, start, mid);
    yield* aggregateWindow(client, target, chainId, req, mid, end);
    return;
  }
  // Written in the order of their group values, whatever order the service sent them in.
  const kept = target.groupBy.length > 0 ? rows : rows.filter((r) => Number(lookup(r, ROW_COUNT_KEY) ?? 1) !== 0);
  if (kept.length === 0) return;
  const time = await windowStartTime(client, chainId, req.axis, start);
  const keyed = kept.map((values) => ({
    values,
    keys: target.groupBy.map((g) => cell(lookup(values, g.key), g.type, () => valueError(target, g.name, g.type, lookup(values, g.key)))),
  }));
  keyed.sort((x, y) => {
    for (let i = 0; i < x.keys.length; i++) {
      const c = compareCells(x.keys[i]!, y.keys[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  yield keyed.map(({ values }) => ({ chain_id: chainId, window_start: start, window_end: end, window_start_time: time, values }));
}

export const aggregatesDataset: Dataset<AggregateTarget, AggregateRecord, 'aggregates', 'wallet' | 'contract'> = {
  name: 'aggregates',
  capabilities: {
    targetKinds: ['wallet', 'contract'],
    defaultFor: [],
    extent: 'ranged',
    rangeAxes: ['block', 'time'],
    pageCap: MAX_PAGE_AGGREGATED,
    filters: 'list-route',
    readsJobAggregates: true,
  },
  buildTarget: aggregateTarget,
  checkOptions: (unit, options) => void aggregateTarget(unit, options),
  tableName: (target) => `${routeOf(target.source).table(target.source)}_${schemaKey(target)}`,
  columns: (target) => [...target.columns],
  sortKey: ['chain_id', 'window_start', 'group keys'],
  targetKey: (target) => routeOf(target.source).key(target.source),
  collection: {
    kind: 'streamed',
    async *streamWindow(client, target, req): AsyncGenerator<PagedBatch<AggregateRecord> | ChainDone> {
      for (const chainId of req.chainIds) {
        try {
          for await (const records of aggregateWindow(client, target, chainId, req, req.start, req.end)) {
            if (records.length > 0) yield { chainId, records };
          }
        } catch (err) {
          throw tagFailedChain(err, chainId);
        }
        yield { chainId, done: true };
      }
    },
  },
  position: (r) => ({ block_number: r.window_start, block_timestamp: r.window_start_time }),
  chainId: (r) => r.chain_id,
  itemId,
  toRow(r, target): AggregateRow {
    const fixed: RowOf<typeof AGGREGATE_FIXED_COLUMNS> = {
      item_id: itemId(r, target),
      chain_id: r.chain_id,
      window_start: r.window_start,
      window_end: r.window_end,
      window_start_time: isoTime(r.window_start_time),
    };
    const row: AggregateRow = fixed; // the same object: the expressions' columns are added to it
    for (const e of [...target.groupBy, ...target.aggregates]) {
      if (FIXED_NAMES.has(e.name)) continue; // `group_by: chain_id` is the row's chain_id
      const value = lookup(r.values, e.key);
      row[e.name] = cell(value, e.type, () => valueError(target, e.name, e.type, value));
    }
    return row;
  },
  partitionDate: (row) => String(row.window_start_time).slice(0, 10),
};
