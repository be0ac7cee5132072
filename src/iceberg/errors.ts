import { ExitCode, InsightExportError, UserInputError } from '../errors.js';

/** Another writer committed each time this run tried: the table is unchanged by this run, its windows are committed in the state. */
export class IcebergCommitConflictError extends InsightExportError {
  override name = 'IcebergCommitConflictError';
  override readonly exitCode: ExitCode = ExitCode.busy;
  constructor(table: string, attempts: number) {
    super(`Another writer committed to Iceberg table ${table} at each of ${attempts} attempts`, {
      details: 'the windows are committed in the state; the table shows them once a commit wins',
      hint: 'Run the job again later: its first step commits what the state holds to the table.',
    });
  }
}

/** The table's metadata holds another schema or partition spec than the job's (evolution is not done yet). */
export class IcebergSchemaChangeError extends UserInputError {
  override name = 'IcebergSchemaChangeError';
  constructor(table: string, what: string) {
    super(`Iceberg table ${table} has another ${what} than the job's`, {
      details: `the table's current metadata and the job's columns or partitioning differ in their ${what}`,
      hint: 'Write the job to a new destination prefix (or a new table name), or restore the job as it was.',
    });
  }
}

/** The output layout cannot hold Iceberg tables. */
export class IcebergLayoutError extends UserInputError {
  override name = 'IcebergLayoutError';
}

/** A table's metadata or manifest cannot be read. */
export class IcebergMetadataError extends InsightExportError {
  override name = 'IcebergMetadataError';
  constructor(key: string, problem: string) {
    super('An Iceberg metadata object cannot be read', {
      details: `${key}: ${problem}`,
      hint: 'Inspect the object; deleting the newest metadata/v<N>.metadata.json makes the previous snapshot current again.',
    });
  }
}
