import type { Column, ColumnType } from '../columns/columns.js';

/**
 * One table says how each column type is stored, so that NDJSON, both Parquet engines and the
 * DDL generator agree. Every Parquet column is OPTIONAL (DuckDB's COPY writes them that way);
 * `nullable: false` is enforced when rows are written instead.
 */
/** Every column type of the column model, in a stable order. */
export const COLUMN_TYPES: readonly ColumnType[] = ['int32', 'int64', 'uint256', 'string', 'bool', 'timestamp', 'date', 'json'];

export type DuckDBTypeName = 'INTEGER' | 'BIGINT' | 'VARCHAR' | 'BOOLEAN' | 'TIMESTAMP WITH TIME ZONE' | 'DATE';

export type ParquetPhysicalType = 'BOOLEAN' | 'INT32' | 'INT64' | 'BYTE_ARRAY';

/** The Parquet LogicalType annotation, shaped as in parquet-format (and hyparquet). */
export type ParquetLogicalType = { type: 'STRING' } | { type: 'TIMESTAMP'; isAdjustedToUTC: true; unit: 'MICROS' } | { type: 'DATE' };

/** The legacy ConvertedType written beside the logical type for old readers (Hive, Athena engine 2). */
export type ParquetConvertedType = 'INT_32' | 'INT_64' | 'UTF8' | 'TIMESTAMP_MICROS' | 'DATE';

export interface ParquetColumnType {
  name: string;
  columnType: ColumnType;
  physicalType: ParquetPhysicalType;
  logicalType: ParquetLogicalType | null;
  convertedType: ParquetConvertedType | null;
  repetition: 'OPTIONAL';
  /** Whether the column model allows nulls (the writers reject nulls where it does not). */
  nullable: boolean;
  duckdbType: DuckDBTypeName;
}

interface TypeMapping {
  physicalType: ParquetPhysicalType;
  logicalType: ParquetLogicalType | null;
  convertedType: ParquetConvertedType | null;
  duckdbType: DuckDBTypeName;
}

const STRING: TypeMapping = {
  physicalType: 'BYTE_ARRAY',
  logicalType: { type: 'STRING' },
  convertedType: 'UTF8',
  duckdbType: 'VARCHAR',
};

const TYPE_MAPPINGS: Record<ColumnType, TypeMapping> = {
  // Integers carry only the INT_32/INT_64 converted type, as DuckDB writes them (readers derive
  // INTEGER(n, signed) from it). hyparquet-writer 0.17 serialises an INTEGER logical type's
  // bitWidth as i32 instead of i8, which pyarrow and arrow-rs reject ("Invalid data").
  int32: {
    physicalType: 'INT32',
    logicalType: null,
    convertedType: 'INT_32',
    duckdbType: 'INTEGER',
  },
  int64: {
    physicalType: 'INT64',
    logicalType: null,
    convertedType: 'INT_64',
    duckdbType: 'BIGINT',
  },
  // uint256 does not fit DECIMAL(38,0) nor any warehouse integer: an exact decimal string.
  uint256: STRING,
  string: STRING,
  // JSON text kept as a plain string: every warehouse reads UTF8, few read the JSON annotation.
  json: STRING,
  bool: { physicalType: 'BOOLEAN', logicalType: null, convertedType: null, duckdbType: 'BOOLEAN' },
  timestamp: {
    physicalType: 'INT64',
    logicalType: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
    convertedType: 'TIMESTAMP_MICROS',
    duckdbType: 'TIMESTAMP WITH TIME ZONE',
  },
  date: { physicalType: 'INT32', logicalType: { type: 'DATE' }, convertedType: 'DATE', duckdbType: 'DATE' },
};

/** The DuckDB type of a column (also the type its Parquet column reads back as in DuckDB). */
export function duckdbType(col: Pick<Column, 'type'>): DuckDBTypeName {
  return TYPE_MAPPINGS[col.type].duckdbType;
}

/** The Parquet schema both engines write for these columns, in column order. */
export function parquetColumnTypes(columns: readonly Column[]): ParquetColumnType[] {
  return columns.map((col) => ({
    name: col.name,
    columnType: col.type,
    ...TYPE_MAPPINGS[col.type],
    repetition: 'OPTIONAL',
    nullable: col.nullable,
  }));
}

/** A column type as an Iceberg table declares it; uint256 stays an exact decimal string, as in every other format (no Iceberg decimal holds 78 digits). */
const ICEBERG_TYPES: Record<ColumnType, string> = {
  int32: 'int',
  int64: 'long',
  uint256: 'string',
  string: 'string',
  bool: 'boolean',
  timestamp: 'timestamptz',
  date: 'date',
  json: 'string',
};

export function icebergType(type: ColumnType): string {
  return ICEBERG_TYPES[type];
}
