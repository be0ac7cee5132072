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
import { InsightExportError, InterruptedError } from '../errors.js';
import { tagFailedChain } from '../source/errors.js';
import type { InsightClient } from '../source/client.js';
import type { ChainDone, RecordPage } from '../source/paginator.js';
import { MAX_PAGE_AGGREGATED, type Filters, type ListQuery } from '../source/query.js';
import type { AggregationRow } from '../source/records.js';
import { column, isoTime, type Column, type ColumnType, type RowOf, type RowValue, type RowWith } from '../columns/columns.js';
import {
  AggregateExpressionError,
  parseAggregate,
  parseGroup,
  type AggregateExpression,
  type AggregateRecord,
  type AggregateSource,
  type AggregateTarget,
  type GroupExpression,
} from './aggregate-query.js';
import { routeOf, SOURCE_ROUTES, type SourceRoute } from './aggregate-sources.js';
import { cell, compareCells, lookup } from './aggregate-values.js';
import { BLOCK_WINDOW_FILTERS, type Dataset, type TargetOptions, type Axis, type WindowRequest } from './dataset.js';
import type { StreamTargetOf } from './target-kinds.js';

export { AggregateExpressionError } from './aggregate-query.js';
export type { AggregateExpression, AggregateRecord, AggregateSource, AggregateTarget, GroupExpression } from './aggregate-query.js';
export { AggregateWalletUnionError } from './aggregate-sources.js';

/** A value in an aggregation row that does not fit the column its expression implies. */
export class AggregateValueError extends InsightExportError {
  override name = 'AggregateValueError';
}

/** Alias of the row count every ungrouped query also asks for (to recognise an empty window). */
export const ROW_COUNT_KEY = 'insight_export_rows';

/** The window cannot be halved further and still has more rows than the page cap allows. */
export class AggregateWindowTooDenseError extends InsightExportError {
  override name = 'AggregateWindowTooDenseError';
}

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

function valueError(target: AggregateTarget, name: string, type: ColumnType, value: unknown): AggregateValueError {
  return new AggregateValueError(`The service sent a value that does not fit aggregate column "${name}" (${type})`, {
    details: `${name} = ${JSON.stringify(value)} (query ${target.queryKey})`,
    hint: 'Alias the expression and check its type, or report the response shape.',
  });
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
  axis: Axis,
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

/** The aggregate target of a unit target, its expressions checked (AggregateExpressionError). */
function aggregateTarget(unit: StreamTargetOf<'wallet' | 'contract'>, options: TargetOptions): AggregateTarget {
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

/** UTC time of the window start: on the block axis, the start block's timestamp (asked once). */
async function windowStartTime(client: InsightClient, chainId: number, axis: Axis, start: number): Promise<number> {
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
    async *streamWindow(client, target, req): AsyncGenerator<RecordPage<AggregateRecord> | ChainDone> {
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
