/** Quoting for the SQL the DuckDB engine runs. */

export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

export function sqlIdentifier(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/**
 * maximum_object_size of staged records. DuckDB's JSON reader sizes its buffers by it (bench:
 * 64 MB cost 60 MB more RSS than 16 MB); DuckDB 1.5 still reads longer records (a test stages a
 * 24 MB row), so this only sets the buffers.
 */
export const MAX_RECORD_BYTES = 16 * 1024 * 1024;
