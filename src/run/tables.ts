import type { DatasetName } from '../datasets/index.js';
import { UserInputError } from '../errors.js';
import { fieldPlace } from '../job/field-place.js';
import type { Job } from '../job/schema.js';
import { chosenTable, type StreamTarget } from '../plan/plan.js';
import { queryFields, jobStreams } from '../plan/streams.js';
import type { Interval } from '../plan/intervals.js';
import { TargetFactory } from './targets.js';
import type { ObjectStore } from '../store/store.js';
import type { OutputFormat } from '../sink/sink.js';
import { checkTableColumns, columnShape, columnsDiffer, type SettledColumns, type TableUse } from '../state/table-columns.js';
import { checkTableQueries, fileInTable } from '../state/table-queries.js';
import type { WindowState } from '../state/window-state.js';

export class TableSchemaConflictError extends UserInputError {
  override name = 'TableSchemaConflictError';
}

/** The job-file field that names a unit's table: its `tables:` entry, or the target (event) that gets the default name. */
function tableField(dataset: DatasetName, t: StreamTarget): { field: string; chosen: boolean } {
  return chosenTable(dataset, t) ? { field: `${t.at}.tables.${dataset}`, chosen: true } : { field: t.defaultTableAt, chosen: false };
}

/** A table the job writes, and the units whose windows it holds. */
export interface JobTable extends TableUse {
  units: string[];
}

/**
 * The tables a job writes, with the columns the dataset modules declare for its targets (equal to
 * those the writers get; no decoder is built for them: TargetFactory.tableOf). Targets that share a default table (wallets -> transactions) are
 * merged by column name, a column with two types being an error; targets the job file sends to
 * one named table must have the same columns.
 */
export async function jobTables(job: Job): Promise<JobTable[]> {
  const factory = new TargetFactory(job);
  const byName = new Map<string, JobTable & { chosen: boolean }>();
  for (const spec of jobStreams(job)) {
    const { name, columns } = await factory.tableOf(spec);
    const { field, chosen } = tableField(spec.dataset, spec.target);
    const known = byName.get(name);
    if (!known) {
      byName.set(name, { name, dataset: spec.dataset, columns: [...columns], field, chosen, units: [spec.unitKey] });
      continue;
    }
    known.units.push(spec.unitKey);
    if (chosen || known.chosen) {
      const diff =
        known.dataset === spec.dataset ? columnsDiffer(columnShape(known.columns), columnShape(columns)) : `it holds ${known.dataset}`;
      if (diff) {
        throw new TableSchemaConflictError(`Table "${name}" is named for rows with other columns`, {
          details: `${fieldPlace(job, field)} against ${fieldPlace(job, known.field)}: ${diff}`,
          hint: 'Give each a table name of its own.',
        });
      }
      continue;
    }
    for (const c of columns) {
      const same = known.columns.find((k) => k.name === c.name);
      if (!same) known.columns.push(c);
      else if (same.type !== c.type) {
        throw new TableSchemaConflictError(`Table ${name} gets column ${c.name} as both ${same.type} and ${c.type}`, {
          details: `${fieldPlace(job, field)} against ${fieldPlace(job, known.field)} (unit ${spec.unitKey})`,
        });
      }
    }
  }
  return [...byName.values()].map(({ chosen: _, ...t }) => t);
}

/**
 * The job's tables checked against what the destination recorded of them, before a run writes
 * anything: a Parquet or NDJSON table keeps its columns (checkTableColumns); an Iceberg table may
 * gain columns, each with a new field id (src/iceberg/field-ids.ts).
 */
export async function settleTableColumns(
  store: ObjectStore,
  job: Job,
  tables: readonly TableUse[],
  format: OutputFormat,
): Promise<SettledColumns> {
  if (format === 'iceberg') return (await import('../iceberg/index.js')).settleIcebergColumns(store, job, tables);
  return { records: await checkTableColumns(store, job, tables), fieldIds: new Map(), changes: new Map() };
}

/**
 * The job's units checked against the other queries of their targets the state holds, before a run
 * writes anything: a table never gets rows of two queries of one target for one window
 * (src/state/table-queries.ts). `planned`: the windows this run exports.
 */
export async function checkJobTableQueries(
  state: WindowState,
  job: Job,
  tables: readonly JobTable[],
  windows: { completed: ReadonlyMap<string, readonly Interval[]>; planned: readonly { unitKey: string; start: number; end: number }[] },
  partitioning: string,
): Promise<void> {
  const tableOf = new Map(tables.flatMap((t) => t.units.map((u) => [u, t.name] as const)));
  const planned = new Map<string, Interval[]>();
  for (const w of windows.planned) {
    let list = planned.get(w.unitKey);
    if (!list) planned.set(w.unitKey, (list = []));
    list.push({ start: w.start, end: w.end });
  }
  const writes = jobStreams(job).flatMap((spec) => {
    const table = tableOf.get(spec.unitKey);
    if (table === undefined) return [];
    return [
      {
        unitKey: spec.unitKey,
        table,
        at: spec.target.at,
        queryFields: queryFields(job, job.targets[spec.target.targetIndex]!, spec.dataset).map((p) => p.field),
        tableField: `${spec.target.at}.tables.${spec.dataset}`,
        completed: windows.completed.get(spec.unitKey) ?? [],
        planned: planned.get(spec.unitKey) ?? [],
      },
    ];
  });
  await checkTableQueries(state, job, writes, windows.completed, fileInTable(partitioning, job.name));
}
