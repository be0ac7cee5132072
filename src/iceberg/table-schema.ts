/**
 * An Iceberg table's schema and partition spec from the table's columns and the output's
 * partitioning template. A column's field id is the one the table keeps for its name
 * (src/iceberg/field-ids.ts), which the DuckDB writer puts into the data files
 * (src/sink/parquet-duckdb.ts); a table's first schema numbers its columns from 1.
 */
import type { Column } from '../columns/columns.js';
import { icebergType } from '../sink/column-types.js';
import { IcebergTableRefusedError } from './errors.js';
import { partitionKeyPattern } from '../sink/partitioning.js';

export interface IcebergField {
  id: number;
  name: string;
  required: boolean;
  type: string;
  doc?: string;
}

export interface IcebergSchema {
  type: 'struct';
  'schema-id': number;
  fields: IcebergField[];
}

export interface PartitionField {
  'source-id': number;
  'field-id': number;
  name: string;
  transform: 'identity' | 'day';
}

export interface PartitionSpec {
  'spec-id': number;
  fields: PartitionField[];
}

/** A column of an Iceberg table: the job's column and the field id the table keeps for its name (default: its position from 1). */
export type TableColumn = Column & { fieldId?: number | undefined };

/**
 * Every field is optional: the data files' Parquet columns are OPTIONAL (DuckDB's COPY writes them
 * so), and a reader may refuse a required field whose column is optional. Non-null columns are
 * enforced when rows are written.
 */
export function tableSchema(columns: readonly TableColumn[]): IcebergSchema {
  return {
    type: 'struct',
    'schema-id': 0,
    fields: columns.map((c, i) => ({
      id: c.fieldId ?? i + 1,
      name: c.name,
      required: false,
      type: icebergType(c.type),
      ...(c.description ? { doc: c.description } : {}),
    })),
  };
}

/** The first partition field id (the spec's convention). */
const FIRST_PARTITION_ID = 1000;

/**
 * identity(chain_id) when the template folders by chain and the table has the column; day(block_time)
 * when it folders by date and the table has block_time (each data file then holds one value of each).
 */
export function partitionSpec(schema: IcebergSchema, template: string): PartitionSpec {
  const fields: PartitionField[] = [];
  const field = (name: string) => schema.fields.find((f) => f.name === name);
  const chain = field('chain_id');
  if (chain && template.includes('{chain_id}')) {
    fields.push({ 'source-id': chain.id, 'field-id': FIRST_PARTITION_ID + fields.length, name: 'chain_id', transform: 'identity' });
  }
  const time = field('block_time');
  if (time && (template.includes('{date}') || ['{year}', '{month}', '{day}'].every((p) => template.includes(p)))) {
    fields.push({ 'source-id': time.id, 'field-id': FIRST_PARTITION_ID + fields.length, name: 'block_time_day', transform: 'day' });
  }
  return { 'spec-id': 0, fields };
}

/** The Iceberg type of a partition field's values (identity: its source's; day: int, days since 1970-01-01). */
export function partitionType(schema: IcebergSchema, f: PartitionField): 'int' | 'long' {
  if (f.transform === 'day') return 'int';
  return schema.fields.find((s) => s.id === f['source-id'])?.type === 'long' ? 'long' : 'int';
}

/** A data file's partition values, by partition field name. */
export type PartitionValues = Record<string, number | null>;

/**
 * Reads a data file's partition values from its key, which the template laid out: the table is
 * the first folder (`{dataset}`), chain and day are the folders' values.
 */
export function keyReader(template: string): (key: string) => { table: string; values: Omit<PartitionValues, never> } | null {
  const folders = template.split('/');
  if (folders[0] !== '{dataset}') {
    throw new IcebergTableRefusedError('An Iceberg destination needs output.partitioning to start with {dataset}/', {
      details: `output.partitioning is ${JSON.stringify(template)}`,
      hint: 'Each table is the folder of its dataset: keep the default "{dataset}/chain_id={chain_id}/date={date}".',
    });
  }
  const pattern = partitionKeyPattern(template);
  return (key) => {
    const g = pattern.exec(key)?.groups;
    if (!g?.dataset) return null;
    const date = g.date ?? (g.year && g.month && g.day ? `${g.year}-${g.month}-${g.day}` : undefined);
    const day = date && /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) / 86_400_000 : null;
    const chain = g.chain_id !== undefined && /^\d+$/.test(g.chain_id) ? Number(g.chain_id) : null;
    return { table: g.dataset, values: { chain_id: chain, block_time_day: day } };
  };
}
