/**
 * The aggregates dataset's query: what its rows are computed over (a wallet's transactions or a
 * contract's events), its group_by and aggregate expressions as the job writes them, each parsed
 * into the column it fills (name and type), and the target that carries them.
 */
import { snakeCase } from '../decode/columns.js';
import type { ParsedEventSignature } from '../abi/event-signature.js';
import type { Column, ColumnType } from '../columns/columns.js';
import { UserInputError } from '../errors.js';
import type { AggregationRow } from '../source/records.js';

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

// ---------------------------------------------------------------------------------------------
// Expressions

const ALIAS_RE = /^(.*?)(?:\s+as\s+([A-Za-z_][A-Za-z0-9_]*))?\s*$/is;
const COLUMN_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TO_DATE_RE = /^toDate\((?:toDateTime\()?([A-Za-z_]\w*)\)?\)$/;
const TO_START_RE = /^toStartOf[A-Za-z]+\((?:toDateTime\()?([A-Za-z_]\w*)\)?\)$/;
const AGGREGATE_RE = /^(count|sum|avg|min|max)\(([A-Za-z0-9_*]*)\)$/i;

export interface Where {
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

export function parseGroup(expression: string, where: Where): GroupExpression {
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

export function parseAggregate(expression: string, where: Where): AggregateExpression {
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
