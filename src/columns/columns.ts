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

export type RowValue = string | number | boolean | null;
export type Row = Record<string, RowValue>;

export function column(name: string, type: ColumnType, description: string, nullable = true): Column {
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
