/** Group-by and aggregates of list queries over the selected rows. */
import { isoDate } from '../../../src/shared-with-sandbox.js';
import { hash3 } from './prng.js';
import { shuffled } from './request-order.js';
import { pageBounds, type CellValue, type ColumnCatalog, type ColumnSpec, type GroupExpr, type ListQuery } from './query.js';
import { walk, type ChainSource, type EngineOptions } from './query-select.js';

export type AggregationValue = string | number | boolean | null;

function groupValue<S>(spec: ColumnSpec<S>, g: GroupExpr, state: S, row: number): AggregationValue {
  const v = spec.get(state, row);
  if (v === null) return null;
  if (g.bucket === 'date') return isoDate(Number(v));
  if (g.bucket === 'startOfDay') return `${isoDate(Number(v))} 00:00:00`;
  if (typeof v === 'bigint') return v.toString();
  if (spec.wire === 'string') return String(v);
  return v;
}

function compareGroupValues(a: AggregationValue, b: AggregationValue): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  if (/^\d+$/.test(sa) && /^\d+$/.test(sb) && sa.length !== sb.length) return sa.length - sb.length;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

interface Accumulator {
  count: number;
  sum: bigint | number;
  min: CellValue;
  max: CellValue;
}

function less(a: CellValue, b: CellValue): boolean {
  if (a === null || b === null) return false;
  if (typeof a === 'string' && typeof b === 'string') return a < b;
  return BigInt(a) < BigInt(b);
}

/**
 * group_by / aggregate: one row per distinct group key (all matching rows of all requested chains),
 * ordered by the group keys (with `unstableOrder` and no sort_by: in no order), then paged with
 * limit/page over those rows.
 */
export function aggregate<S>(
  sources: ChainSource<S>[],
  query: ListQuery,
  catalog: ColumnCatalog<S>,
  engine: EngineOptions = {},
): Record<string, AggregationValue>[] {
  const groups = new Map<string, { keys: AggregationValue[]; accs: Accumulator[] }>();
  const groupSpecs = query.groupBy.map((g) => catalog[g.column]!);
  const aggSpecs = query.aggregates.map((a) => (a.column === null ? null : catalog[a.column]!));
  for (const source of sources) {
    walk(source, { ...query, sortBy: null }, catalog, (row) => {
      const keys = query.groupBy.map((g, i) => groupValue(groupSpecs[i]!, g, source.state, row));
      const id = JSON.stringify(keys);
      let group = groups.get(id);
      if (!group) {
        group = { keys, accs: query.aggregates.map(() => ({ count: 0, sum: 0, min: null, max: null })) };
        groups.set(id, group);
      }
      query.aggregates.forEach((a, i) => {
        const acc = group!.accs[i]!;
        const spec = aggSpecs[i];
        if (!spec) {
          acc.count++;
          return;
        }
        const v = spec.get(source.state, row);
        if (v === null) return;
        acc.count++;
        if (a.fn === 'sum' || a.fn === 'avg') {
          if (spec.kind === 'big' || typeof acc.sum === 'bigint') acc.sum = BigInt(acc.sum) + BigInt(v);
          else acc.sum = (acc.sum as number) + (v as number);
        } else if (a.fn === 'min') {
          if (acc.min === null || less(v, acc.min)) acc.min = v;
        } else if (a.fn === 'max') {
          if (acc.max === null || less(acc.max, v)) acc.max = v;
        }
      });
      return true;
    });
  }
  const sorted = [...groups.values()].sort((x, y) => {
    for (let i = 0; i < x.keys.length; i++) {
      const c = compareGroupValues(x.keys[i]!, y.keys[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  const rows = sorted.map((g) => {
    const out: Record<string, AggregationValue> = {};
    query.groupBy.forEach((gb, i) => (out[gb.key] = g.keys[i]!));
    query.aggregates.forEach((a, i) => {
      const acc = g.accs[i]!;
      const spec = aggSpecs[i];
      switch (a.fn) {
        case 'count':
          out[a.key] = acc.count;
          break;
        case 'sum':
          out[a.key] = spec!.kind === 'big' ? BigInt(acc.sum).toString() : Number(acc.sum);
          break;
        case 'avg':
          out[a.key] = acc.count === 0 ? null : Number(acc.sum) / acc.count;
          break;
        case 'min':
        case 'max': {
          const v = a.fn === 'min' ? acc.min : acc.max;
          out[a.key] = v === null ? null : typeof v === 'bigint' ? v.toString() : spec!.wire === 'string' ? String(v) : v;
          break;
        }
      }
    });
    return out;
  });
  // GROUP BY without ORDER BY has no order.
  const ordered = engine.unstableOrder && query.sortBy === null ? shuffled(rows, (_, i) => hash3(engine.requestKey ?? 0, i, 0x6b)) : rows;
  const { skip, end } = pageBounds(query.limit, query.page);
  return ordered.slice(skip, end);
}
