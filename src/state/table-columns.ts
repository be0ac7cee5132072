/**
 * The columns each table of a job was first written with, kept at the destination
 * (`_state/<job>/tables/<table>.json`), so that a job file edited later (an event parameter
 * renamed, an aggregate expression changed, decoding turned on) never writes files with other
 * columns under the same table name: warehouses and dashboards point at the name. A run checks
 * every table before it writes anything, and records the tables it is about to write.
 *
 * Conservative on purpose: any difference (a column added, removed, renamed, retyped, made
 * nullable or moved) is refused, even one a Parquet reader could union by name, because an
 * external table declared over the folder has one column list. An Iceberg table's record also
 * keeps each column's field id, and the table may gain columns (src/iceberg/field-ids.ts).
 */
import type { Column } from '../columns/columns.js';
import { UserInputError } from '../errors.js';
import type { ObjectStore } from '../store/store.js';

/** A table of the job, with the job-file field that names it (for messages). */
export interface TableUse {
  name: string;
  dataset: string;
  columns: Column[];
  /** `targets[0].events[1].tables.events`, or the target's datasets when the name is the default. */
  field: string;
}

export interface RecordedColumn {
  name: string;
  type: string;
  nullable: boolean;
  /** Iceberg tables: the field id the table keeps for the column (absent in older records: its position from 1). */
  field_id?: number;
}

export interface TableRecord {
  table: string;
  dataset: string;
  columns: RecordedColumn[];
}

/** What a run settled of its tables' columns before writing: the records to write first, and (Iceberg) each table's field ids. */
export interface SettledColumns {
  /** Records of tables not yet recorded, or (Iceberg) whose columns evolve: written before the table's first file. */
  records: TableRecord[];
  /** Iceberg: each table's field id by column name. */
  fieldIds: Map<string, ReadonlyMap<string, number>>;
  /** Iceberg: tables whose record gains columns (with their field ids) or promotes a column's type. */
  changes: Map<string, { added: { name: string; field_id: number }[]; promoted: string[] }>;
}

export class TableColumnsChangedError extends UserInputError {
  override name = 'TableColumnsChangedError';
}

export const tableRecordKey = (jobName: string, table: string): string => `_state/${jobName}/tables/${table}.json`;

/** What a table record keeps of a column list (no descriptions). */
export const columnShape = (columns: readonly Column[]): RecordedColumn[] =>
  columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable !== false }));

const label = (c: RecordedColumn) => `${c.name} ${c.type}${c.nullable ? '' : ' not null'}`;

/** The table's record, null when none was written. */
export async function readTableRecord(store: ObjectStore, jobName: string, table: string): Promise<TableRecord | null> {
  const got = await store.get(tableRecordKey(jobName, table));
  return got ? (JSON.parse(got.body.toString('utf8')) as TableRecord) : null;
}

/** The record of a table as the job declares it. */
const recordOf = (t: TableUse): TableRecord => ({ table: t.name, dataset: t.dataset, columns: columnShape(t.columns) });

/** What differs between the recorded columns and the job's, or null when they are the same. */
export function columnsDiffer(recorded: TableRecord['columns'], now: TableRecord['columns']): string | null {
  const before = new Map(recorded.map((c) => [c.name, c]));
  const after = new Map(now.map((c) => [c.name, c]));
  const parts: string[] = [];
  const removed = recorded.filter((c) => !after.has(c.name));
  const added = now.filter((c) => !before.has(c.name));
  if (removed.length) parts.push(`no longer has ${removed.map(label).join(', ')}`);
  if (added.length) parts.push(`would add ${added.map(label).join(', ')}`);
  for (const c of now) {
    const old = before.get(c.name);
    if (old && (old.type !== c.type || old.nullable !== c.nullable)) parts.push(`${c.name} was ${label(old)}, now ${label(c)}`);
  }
  if (parts.length === 0) {
    const a = recorded.map((c) => c.name).join(',');
    const b = now.map((c) => c.name).join(',');
    if (a !== b) parts.push(`the columns are in another order (was ${a})`);
  }
  return parts.length ? parts.join('; ') : null;
}

/**
 * Refuses (TableColumnsChangedError, exit 2) a table whose recorded columns differ from the job's,
 * and returns the records of the tables not yet recorded (see recordTableColumns). Reads one object per table.
 */
export async function checkTableColumns(
  store: ObjectStore,
  job: { name: string; jobFile: string },
  tables: readonly TableUse[],
): Promise<TableRecord[]> {
  const found = await Promise.all(tables.map(async (t) => ({ t, got: await readTableRecord(store, job.name, t.name) })));
  const missing: TableRecord[] = [];
  for (const { t, got } of found) {
    if (!got) {
      missing.push(recordOf(t));
      continue;
    }
    const diff = columnsDiffer(got.columns, columnShape(t.columns));
    if (diff) {
      throw new TableColumnsChangedError(`Table "${t.name}" would get other columns than it was first written with`, {
        details: `${job.jobFile} ${t.field}: ${diff} (recorded at ${store.location} ${tableRecordKey(job.name, t.name)})`,
        hint: `Give the changed ${t.dataset} a new table name in ${t.field}, or undo the edit; to replace the table, delete its folder and that record first.`,
      });
    }
  }
  return missing;
}

/** Writes the records a run settled (new tables; evolved Iceberg tables), before the run writes their files. */
export async function recordTableColumns(store: ObjectStore, job: { name: string }, records: readonly TableRecord[]): Promise<void> {
  await Promise.all(
    records.map((r) =>
      store.put(tableRecordKey(job.name, r.table), `${JSON.stringify(r, null, 2)}\n`, { contentType: 'application/json' }),
    ),
  );
}
