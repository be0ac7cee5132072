/**
 * The column model shared by every dataset and every sink. A dataset declares its columns once;
 * NDJSON and both Parquet engines write exactly these columns with these types, and the DDL
 * generator maps them to warehouse types.
 *
 * Row values by column type:
 *  - int32 / int64: JS number (safe integer) or null
 *  - uint256: exact decimal string (never a JS number: uint256 does not fit a double)
 *  - string / hex: string (hex lowercase 0x...)
 *  - bool: boolean
 *  - timestamp: ISO-8601 UTC string `YYYY-MM-DDTHH:MM:SSZ` (Parquet: TIMESTAMP(MICROS, UTC))
 *  - date: `YYYY-MM-DD` (Parquet: DATE)
 *  - json: a string holding JSON text
 */
export type ColumnType = 'int32' | 'int64' | 'uint256' | 'string' | 'bool' | 'timestamp' | 'date' | 'json';

export interface Column {
  name: string;
  type: ColumnType;
  nullable: boolean;
  description: string;
}

/** The JS value of a non-null cell of each column type (see above). */
export interface ColumnValue {
  int32: number;
  int64: number;
  uint256: string;
  string: string;
  bool: boolean;
  timestamp: string;
  date: string;
  json: string;
}

/** A column whose name, type and nullability the type checker knows: what `column` returns. */
export interface ColumnOf<Name extends string, Type extends ColumnType, Nullable extends boolean> extends Column {
  readonly name: Name;
  readonly type: Type;
  readonly nullable: Nullable;
}

export type RowValue = string | number | boolean | null;
export type Row = Record<string, RowValue>;

/**
 * The row of a column declaration (`[...] as const` of `column(...)`): one key per column, its
 * value the column type's, or null when the column is nullable. A row literal of this type with a
 * misspelt, missing or extra column does not type-check.
 */
export type RowOf<Columns extends readonly Column[]> = {
  [C in Columns[number] as C['name']]: ColumnValue[C['type']] | (C['nullable'] extends false ? never : null);
};

/** A row of declared columns followed by columns only known at run time (a decoder's, the job's aggregate expressions). */
export type RowWith<Columns extends readonly Column[]> = RowOf<Columns> & Row;

export function column<Name extends string, Type extends ColumnType, Nullable extends boolean = true>(
  name: Name,
  type: Type,
  description: string,
  nullable: Nullable = true as Nullable,
): ColumnOf<Name, Type, Nullable> {
  return { name, type, nullable, description };
}

/** Unix seconds to the ISO-8601 UTC form used by `timestamp` columns. */
export function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** Unix seconds to the `YYYY-MM-DD` UTC date used by `date` columns and partitions. */
export function isoDate(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(0, 10);
}
