/**
 * A table never holds rows of two queries of one target for one window. A unit's key carries its
 * query (the `~<variant>` of src/plan/stream-key.ts: filters, aggregate expressions, NFT types) and
 * the axis its windows count: a job edited so that a target's query or `range.by` changes while its
 * table stays (the columns being the same, src/state/table-columns.ts lets it through) has a new
 * unit, which would export its range again beside the old unit's rows, each row twice (a wallet's
 * transaction once per query, an aggregate window once per expression).
 *
 * So a run refuses, before it writes anything, a unit whose windows (those this run writes, and
 * those the table already holds) overlap the windows of another unit of the same target and chain
 * whose files are in the same table; windows counting another axis cannot be compared and count as
 * overlapping. An old unit whose windows lie in another table, hold no file, or end before the new
 * query's start is no duplicate: the edit goes through.
 */
import { UserInputError } from '../errors.js';
import { formatInterval, isoUtc } from '../plan/format-interval.js';
import { intersect, merge, type Interval } from '../plan/intervals.js';
import { isSnapshotStream, parseStreamKey, type StreamKey } from '../plan/stream-key.js';
import { partitioningUses, partitionKeyPattern } from '../sink/partitioning.js';
import type { WindowRecord, WindowState } from './window-state.js';

export class TableQueryChangedError extends UserInputError {
  override name = 'TableQueryChangedError';
}

/** A unit of the job, the table its rows go to, and what names it in the job file (for messages). */
export interface StreamWrite {
  unitKey: string;
  table: string;
  /** The target in the job file: `targets[0]`, `targets[1].events[0]`. */
  at: string;
  /** The fields that make the unit's query (`targets[0].filters`, `aggregates` ...). */
  queryFields: string[];
  /** Where the target names a table of its own for the dataset: `targets[0].tables.transactions`. */
  tableField: string;
  /** Windows of the unit the state holds (completed). */
  completed: readonly Interval[];
  /** Windows this run exports. */
  planned: readonly Interval[];
}

/** Whether a data file lies in a table: the `{dataset}` folder of its key (a template without one has one table; a key it does not make counts as in). */
export function fileInTable(partitioning: string, jobName: string): (key: string, table: string) => boolean {
  if (!partitioningUses(partitioning, 'dataset')) return () => true;
  const pattern = partitionKeyPattern(partitioning, jobName);
  return (key, table) => {
    const dataset = pattern.exec(key)?.groups?.dataset;
    return dataset === undefined || dataset === table;
  };
}

const streamOf = (k: StreamKey) => `${k.dataset}/${k.target}/${k.chainId}`;

/**
 * Refuses (TableQueryChangedError, exit 2) the first unit of `writes` whose windows overlap those of
 * another unit of its target and chain in `completed` (the state's units) with files in its table.
 * Reads the records of those other units only (a target whose query never changed costs nothing).
 */
export async function checkTableQueries(
  state: WindowState,
  job: { jobFile: string },
  writes: readonly StreamWrite[],
  completed: ReadonlyMap<string, readonly Interval[]>,
  inTable: (key: string, table: string) => boolean,
): Promise<void> {
  const current = new Set(writes.map((w) => w.unitKey));
  const byStream = new Map<string, { write: StreamWrite; key: StreamKey }[]>();
  for (const write of writes) {
    const key = parseStreamKey(write.unitKey)!;
    let list = byStream.get(streamOf(key));
    if (!list) byStream.set(streamOf(key), (list = []));
    list.push({ write, key });
  }
  const records = new Map<string, Promise<WindowRecord[]>>();
  /** The unit's windows with files in the table (a unit's table may have been renamed since). */
  const recordsIn = async (unitKey: string, table: string) => {
    let read = records.get(unitKey);
    if (!read) records.set(unitKey, (read = state.unitRecords(unitKey)));
    return (await read).filter((r) => r.files.some((f) => inTable(f.key, table)));
  };
  for (const [otherKey, otherWindows] of completed) {
    const other = parseStreamKey(otherKey);
    if (!other || current.has(otherKey)) continue;
    for (const { write, key } of byStream.get(streamOf(other)) ?? []) {
      // Windows counting another axis cannot be told apart: any window of the other unit clashes.
      const overlap = (windows: readonly Interval[], others: readonly Interval[]) =>
        key.axis === other.axis ? intersect(merge(windows), merge(others)) : others.length > 0 ? merge(windows) : [];
      if (overlap([...write.completed, ...write.planned], otherWindows).length === 0) continue;
      const inThisTable = await recordsIn(otherKey, write.table);
      const wouldWrite = overlap(write.planned, inThisTable);
      const held =
        overlap(write.completed, inThisTable).length > 0 ? overlap(await recordsIn(write.unitKey, write.table), inThisTable) : [];
      if (held.length === 0 && wouldWrite.length === 0) continue;
      throw refusal({ state, job, write, key, otherKey, other, inThisTable, held, wouldWrite });
    }
  }
}

interface Clash {
  state: WindowState;
  job: { jobFile: string };
  write: StreamWrite;
  key: StreamKey;
  otherKey: string;
  other: StreamKey;
  /** The other unit's windows with files in the table. */
  inThisTable: WindowRecord[];
  /** Windows of both queries the table holds already; windows this run would export beside the other's. */
  held: Interval[];
  wouldWrite: Interval[];
}

function refusal(c: Clash): TableQueryChangedError {
  const { write, key, other } = c;
  const table = `"${write.table}"`;
  const span = (axis: StreamKey['axis'], windows: readonly Interval[]) => {
    const all = merge(windows);
    return formatInterval(axis, { start: all[0]!.start, end: all.at(-1)!.end });
  };
  const changed =
    key.axis !== other.axis
      ? `range.by: the target's windows count ${key.axis === 'block' ? 'blocks' : 'time'} now, ${other.axis === 'block' ? 'blocks' : 'time'} when its rows in ${table} were exported`
      : `${write.queryFields.join(' or ') || 'the query'}: the target's query changed since its rows in ${table} were exported`;
  const what =
    c.held.length > 0
      ? `the table already holds rows of both queries over ${span(key.axis, c.held)}`
      : `this run would export ${span(key.axis, c.wouldWrite)} again beside them`;
  const old = `${c.inThisTable.length} window(s) over ${span(other.axis, c.inThisTable)}, unit ${c.otherKey}, now ${write.unitKey}`;
  const steps = [`give the changed query a table of its own in ${write.tableField}`, 'undo the edit'];
  if (key.axis === other.axis && !isSnapshotStream(key) && c.held.length === 0)
    steps.push(`start it after the old query's rows (range.from: ${formatPoint(key.axis, Math.max(...c.inThisTable.map((r) => r.end)))})`);
  const root = c.state.root;
  return new TableQueryChangedError(`Table ${table} would hold rows of two queries of ${write.at} on chain ${key.chainId}`, {
    details: `${c.job.jobFile} ${changed} (${old}); ${what}: rows twice (recorded at ${c.state.store.location} ${root}/units/${c.otherKey}.json)`,
    hint:
      `${capitalise(`${steps.slice(0, -1).join(', ')} or ${steps.at(-1)!}`)}. To replace the old rows instead, delete the old query's ` +
      `units/<unit>.json, segments/<unit>/ and completed/<unit>/ under ${root}/ (<unit>: ${c.otherKey}) and, for Parquet or NDJSON, its files in ${table}.`,
  });
}

const capitalise = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}`;
const formatPoint = (axis: StreamKey['axis'], point: number) => (axis === 'block' ? String(point) : `"${isoUtc(point)}"`);
