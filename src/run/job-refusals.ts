/**
 * The refusals that follow from the job and from what the destination records of its tables and
 * partitions, made before a run takes its lease (src/run/open-run.ts): a run refused for its job
 * writes nothing at the destination, not even a lease or a failure report. Read-only: the run
 * settles the same tables again once it holds the lease (src/run/run-plan.ts), as another run may
 * have written them meanwhile.
 */
import type { ResolvedConfig } from '../config/index.js';
import type { Job } from '../job/schema.js';
import type { Stream } from '../plan/streams.js';
import { claimPartitions } from '../state/owners.js';
import type { ObjectStore } from '../store/store.js';
import { jobTables, settleTableColumns, type JobTable } from './tables.js';
import { checkDatasetOptions } from './targets.js';

/**
 * What the job alone refuses, no request and no destination: a dataset's options (aggregate
 * expressions), and one table name for rows with other columns (TableSchemaConflictError). Returns
 * the job's tables. `validate` refuses what this refuses.
 */
export async function refuseJob(job: Job): Promise<JobTable[]> {
  checkDatasetOptions(job);
  return jobTables(job);
}

/**
 * What the job refuses at its destination, before the run writes anything there: the job's own
 * refusals, its tables' columns against those the destination recorded (TableColumnsChangedError;
 * an Iceberg table's schema), the Iceberg layout, and partitions another job owns (DestinationOwnedError).
 * Returns the job's tables.
 */
export async function refuseAtDestination(
  store: ObjectStore,
  job: Job,
  streams: readonly Readonly<Stream>[],
  output: Pick<ResolvedConfig['output'], 'format' | 'partitioning'>,
  iceberg: Pick<typeof import('../iceberg/index.js'), 'checkIcebergLayout'> | null,
): Promise<JobTable[]> {
  const tables = await refuseJob(job);
  iceberg?.checkIcebergLayout(output.partitioning);
  await settleTableColumns(store, job, tables, output.format);
  // Refused as a claim would refuse; claimed only once the run is about to write (src/run/export-run.ts).
  await claimPartitions(store, job.name, output.partitioning, streams, { checkOnly: true });
  return tables;
}
