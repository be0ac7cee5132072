/**
 * How an Iceberg table's schema may follow its columns (apache/iceberg `format/spec.md`, "Schema
 * Evolution"): a field keeps its id for as long as the table exists, readers match data files'
 * columns to fields by id, a field added gets an id above the table's `last-column-id` (older data
 * files lack it: readers see null), and `int` may become `long`. Fields in another order are the
 * same fields. A field removed, or another type, is refused here: readers would hide the column
 * from every older row, or read values of one type as another.
 */
import { IcebergTableRefusedError } from './errors.js';
import type { TableMetadata } from './table-metadata.js';
import type { IcebergField, IcebergSchema } from './table-schema.js';

/** The type promotions the spec allows that our column types can take (int32 -> int64). */
const PROMOTIONS: Record<string, string[]> = { int: ['long'] };

/** Whether a field of Iceberg type `from` may become `to`. */
export const promotes = (from: string, to: string): boolean => PROMOTIONS[from]?.includes(to) === true;

export interface SchemaChange {
  /** Columns new to the table, in the schema's order. */
  added: string[];
  /** Columns whose type was promoted (int -> long). */
  promoted: string[];
  /** What the table cannot take (empty: the change is compatible). */
  refused: string[];
}

/** What `wanted` changes of the table's `current` schema; field ids go by name. */
export function schemaChange(current: IcebergSchema, lastColumnId: number, wanted: IcebergSchema): SchemaChange {
  const byName = new Map(wanted.fields.map((f) => [f.name, f]));
  const currentIds = new Set(current.fields.map((f) => f.id));
  const change: SchemaChange = { added: [], promoted: [], refused: [] };
  for (const was of current.fields) {
    const now = byName.get(was.name);
    if (!now) change.refused.push(`no longer has ${was.name} ${was.type}`);
    else if (now.id !== was.id) change.refused.push(`${was.name} has field id ${was.id} in the table, ${now.id} in the job's record`);
    else if (now.type !== was.type) {
      if (promotes(was.type, now.type)) change.promoted.push(was.name);
      else change.refused.push(`${was.name} was ${was.type}, now ${now.type}`);
    }
  }
  const known = new Set(current.fields.map((f) => f.name));
  for (const f of wanted.fields) {
    if (known.has(f.name)) continue;
    if (currentIds.has(f.id) || f.id <= lastColumnId)
      change.refused.push(`new column ${f.name} would take field id ${f.id}, which the table has assigned before`);
    else change.added.push(f.name);
  }
  return change;
}

/** True when the change needs a new schema. */
export const evolves = (c: SchemaChange): boolean => c.added.length > 0 || c.promoted.length > 0;

/**
 * The table with `wanted` appended as its new current schema (the next schema id), `last-column-id`
 * raised to its highest field id. A field without a doc keeps the one the table gave it.
 */
export function withSchema(meta: TableMetadata, current: IcebergSchema, wanted: IcebergSchema): TableMetadata {
  const docs = new Map(current.fields.map((f) => [f.id, f.doc]));
  const fields: IcebergField[] = wanted.fields.map((f) => {
    const doc = f.doc ?? docs.get(f.id);
    return { ...f, ...(doc ? { doc } : {}) };
  });
  const schemaId = Math.max(...meta.schemas.map((s) => s['schema-id'])) + 1;
  return {
    ...meta,
    'last-column-id': Math.max(meta['last-column-id'], ...fields.map((f) => f.id)),
    'current-schema-id': schemaId,
    schemas: [...meta.schemas, { type: 'struct', 'schema-id': schemaId, fields }],
  };
}

/**
 * The refusal of a change an Iceberg table cannot take: `where` says what was compared (the job
 * file and its field), `what` what differs, `field` the job-file field that names the table.
 */
export function schemaRefused(table: string, what: string, where: string, field?: string): IcebergTableRefusedError {
  return new IcebergTableRefusedError(`Iceberg table "${table}" cannot take the job's columns`, {
    details: `${where}: ${what}`,
    hint:
      `An Iceberg table takes new columns and int32 -> int64, not a column removed, renamed or of another type: ` +
      `give the changed rows a new table name${field ? ` in ${field}` : ' (tables: in the job)'}, or undo the edit.`,
  });
}
