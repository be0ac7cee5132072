/**
 * The field ids of an Iceberg table's columns. A column gets its id once, by name, and keeps it for
 * as long as the table exists: the first columns 1..n, a column added later the next id above
 * every id the table has used. The ids live in the table's record
 * (`_state/<job>/tables/<table>.json`, src/state/table-columns.ts), written before the run's first
 * data file of the table, for two reasons: a data file carries the ids before any commit names
 * them, and a run that dies between its files and its table commit leaves the record behind, so
 * the next run's commit (which builds the table's schema from the record) gives those files'
 * columns the same ids, whatever the job file says by then.
 *
 * A run checks each table before it writes anything: the job's columns against the record (a
 * column removed, or of another type than int32 -> int64, is refused), then the record against
 * the table's current schema (src/iceberg/schema-evolution.ts). Parquet and NDJSON tables keep
 * refusing any change (checkTableColumns).
 */
import type { Column, ColumnType } from '../columns/columns.js';
import {
  columnShape,
  readTableRecord,
  tableRecordKey,
  type RecordedColumn,
  type SettledColumns,
  type TableRecord,
  type TableUse,
} from '../state/table-columns.js';
import type { ObjectStore } from '../store/store.js';
import { readCurrentVersion } from './table-versions.js';
import { promotes, schemaChange, schemaRefused } from './schema-evolution.js';
import { currentSchema } from './table-metadata.js';
import { icebergType } from '../sink/column-types.js';
import { tableSchema, type IcebergSchema, type TableColumn } from './table-schema.js';

/** The table as its current metadata has it: its schema and the highest field id it assigned. */
interface CurrentTable {
  key: string;
  schema: IcebergSchema;
  lastColumnId: number;
}

interface EvolvedRecord {
  columns: Required<RecordedColumn>[];
  added: { name: string; field_id: number }[];
  promoted: string[];
  refused: string[];
}

/**
 * The record's columns with the job's: recorded columns keep their id and place (their nullability
 * and a promoted type follow the job; another column type, e.g. uint256 -> string, is refused even
 * where both are Iceberg strings), the job's new columns are appended with new ids (a table
 * without a record: the ids its current schema has for their names).
 */
export function evolveRecord(
  recorded: readonly RecordedColumn[] | null,
  now: readonly Column[],
  table: CurrentTable | null,
): EvolvedRecord {
  const base = (recorded ?? []).map((c, i) => ({ ...c, field_id: c.field_id ?? i + 1 }));
  const job = new Map(columnShape(now).map((c) => [c.name, c]));
  const tableIds = new Map(table?.schema.fields.map((f) => [f.name, f.id]));
  const out: EvolvedRecord = { columns: [], added: [], promoted: [], refused: [] };
  for (const was of base) {
    const c = job.get(was.name);
    if (!c) out.refused.push(`no longer has ${was.name} ${was.type}`);
    else if (c.type !== was.type && !promotes(icebergType(was.type as ColumnType), icebergType(c.type as ColumnType)))
      out.refused.push(`${was.name} was ${was.type}, now ${c.type}`);
    else {
      if (c.type !== was.type) out.promoted.push(was.name);
      out.columns.push({ ...c, field_id: was.field_id });
    }
  }
  let last = Math.max(0, table?.lastColumnId ?? 0, ...base.map((c) => c.field_id));
  const known = new Set(base.map((c) => c.name));
  for (const c of job.values()) {
    if (known.has(c.name)) continue;
    const id = tableIds.get(c.name) ?? ++last;
    out.columns.push({ ...c, field_id: id });
    if (recorded) out.added.push({ name: c.name, field_id: id });
  }
  return out;
}

async function currentTable(store: ObjectStore, table: string): Promise<CurrentTable | null> {
  const current = await readCurrentVersion(store, table);
  if (!current) return null;
  return { key: current.key, schema: currentSchema(current.meta, current.key), lastColumnId: current.meta['last-column-id'] };
}

/** A record's columns as table columns (field ids included); descriptions are the job's where it has the column. */
function tableColumns(columns: readonly RecordedColumn[], job: readonly Column[]): TableColumn[] {
  const docs = new Map(job.map((c) => [c.name, c.description]));
  return columns.map((c, i) => ({
    name: c.name,
    type: c.type as ColumnType,
    nullable: c.nullable,
    description: docs.get(c.name) ?? '',
    fieldId: c.field_id ?? i + 1,
  }));
}

/**
 * Before a run writes anything: each table's field ids, the records to write first (new tables,
 * evolved ones), and the tables that gain columns; a change the table cannot take is refused
 * (IcebergTableRefusedError, exit 2) naming the table, the job file and its field.
 */
export async function settleIcebergColumns(
  store: ObjectStore,
  job: { name: string; jobFile: string },
  tables: readonly TableUse[],
): Promise<SettledColumns> {
  const found = await Promise.all(
    tables.map(async (t) => {
      const [record, table] = await Promise.all([readTableRecord(store, job.name, t.name), currentTable(store, t.name)]);
      return { t, record, table };
    }),
  );
  const settled: SettledColumns = { records: [], fieldIds: new Map(), changes: new Map() };
  for (const { t, record, table } of found) {
    const where = `${job.jobFile} ${t.field}`;
    const evolved = evolveRecord(record?.columns ?? null, t.columns, table);
    if (evolved.refused.length > 0)
      throw schemaRefused(
        t.name,
        evolved.refused.join('; '),
        `${where} against ${store.location} ${tableRecordKey(job.name, t.name)}`,
        t.field,
      );
    if (table) {
      const change = schemaChange(table.schema, table.lastColumnId, tableSchema(tableColumns(evolved.columns, t.columns)));
      if (change.refused.length > 0)
        throw schemaRefused(t.name, change.refused.join('; '), `${where} against ${store.location} ${table.key}`, t.field);
    }
    const next: TableRecord = { table: t.name, dataset: t.dataset, columns: evolved.columns };
    if (JSON.stringify(record?.columns) !== JSON.stringify(next.columns)) settled.records.push(next);
    if (evolved.added.length > 0 || evolved.promoted.length > 0)
      settled.changes.set(t.name, { added: evolved.added, promoted: evolved.promoted });
    settled.fieldIds.set(t.name, new Map(evolved.columns.map((c) => [c.name, c.field_id])));
  }
  return settled;
}

/**
 * The columns a table commit gives the table's schema: the record's, in its order, with their
 * field ids (a table without a record: the job's, with the ids its current schema has for them).
 */
export async function committedColumns(
  store: ObjectStore,
  jobName: string,
  tables: readonly { name: string; columns: readonly Column[] }[],
): Promise<{ name: string; columns: TableColumn[] }[]> {
  return Promise.all(
    tables.map(async (t) => {
      const record = await readTableRecord(store, jobName, t.name);
      const columns = record?.columns ?? evolveRecord(null, t.columns, await currentTable(store, t.name)).columns;
      return { name: t.name, columns: tableColumns(columns, t.columns) };
    }),
  );
}

/**
 * The field id of each column of a table, by name: the record's (which holds every column a data
 * file may have, committed or not), else the table's current schema's; empty when neither exists.
 * For writers of a table's data files outside a run (compaction).
 */
export async function tableFieldIds(store: ObjectStore, jobName: string, table: string): Promise<ReadonlyMap<string, number>> {
  const record = await readTableRecord(store, jobName, table);
  if (record) return new Map(record.columns.map((c, i) => [c.name, c.field_id ?? i + 1]));
  const current = await currentTable(store, table);
  return new Map(current?.schema.fields.map((f) => [f.name, f.id]));
}
