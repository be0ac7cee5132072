import { ExitCode, InsightExportError, UserInputError } from '../errors.js';

/** Another writer committed each time this run tried: the table is unchanged by this run, its windows are committed in the state. */
export class IcebergCommitConflictError extends InsightExportError {
  override name = 'IcebergCommitConflictError';
  override readonly exitCode: ExitCode = ExitCode.busy;
  constructor(table: string, attempts: number) {
    super(`Another writer committed to Iceberg table ${table} at each of ${attempts} attempts`, {
      details: 'the windows are committed in the state; the table shows them once a commit wins',
      hint: 'Run the job again later: every run commits what the state holds to the table.',
    });
  }
}

/** The job's output cannot be this Iceberg table: a layout without the table's folder, a column change the table cannot take (a column removed, another type), or another partition spec. */
export class IcebergTableRefusedError extends UserInputError {
  override name = 'IcebergTableRefusedError';
}

/** A table's metadata or manifest cannot be read. */
export class IcebergMetadataError extends InsightExportError {
  override name = 'IcebergMetadataError';
  constructor(key: string, problem: string) {
    const hint = 'Inspect the object; deleting the newest metadata/v<N>.metadata.json makes the previous snapshot current again.';
    super(`Iceberg metadata ${key} cannot be read: ${problem}`, { hint });
  }
}

/** A commit asked to be a replace (compaction) would change the table's record count: refused, never labelled otherwise. */
export class IcebergReplaceChangesRowsError extends InsightExportError {
  override name = 'IcebergReplaceChangesRowsError';
  constructor(table: string, before: number, after: number) {
    super(`A replace commit of Iceberg table ${table} would change its records from ${before} to ${after}`, {
      details: "a replace snapshot rewrites files without changing the table's rows; the table was left as it was",
      hint: 'Run the job (its end commits the table to the state), then `insight-export verify` it and compact again.',
    });
  }
}
