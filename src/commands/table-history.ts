import type { CommandModule } from 'yargs';
import { withSettingFlags } from '../config/flags.js';
import { UserInputError } from '../errors.js';
import type { TableHistoryOptions } from '../iceberg/table-history.js';
import { jobTables } from '../run/tables.js';
import { acquireJobLease } from '../state/job-lease.js';
import { WindowState } from '../state/window-state.js';
import { openStore } from '../store/open-store.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import type { ResolvedConfig } from '../config/index.js';
import type { UnreferencedFilesInput } from '../state/unreferenced-files.js';

export interface TableHistoryArgs extends ConfigArgs {
  job: string;
  'dry-run': boolean;
  json: boolean;
}

/** What a maintenance command of a job that does not write Iceberg tables is handed (remove-orphan-files). */
export interface FilesMaintenanceInput extends UnreferencedFilesInput {
  config: ResolvedConfig;
}

/**
 * expire-snapshots and remove-orphan-files: refused (exit 2) unless the job writes Iceberg tables
 * or the command has `otherFormats`; the job's exclusive lease held (no run, shard or worker of the job
 * commits meanwhile; a dry run takes none), the retention from output.snapshot_retention, the report as JSON or a summary.
 */
export function tableHistoryCommand<R>(spec: {
  name: string;
  describe: string;
  example: [string, string];
  run: (input: TableHistoryOptions) => Promise<R>;
  /** What the command does to a Parquet or NDJSON destination (absent: it is refused). */
  otherFormats?: (input: FilesMaintenanceInput) => Promise<R>;
  summary: (report: R, job: string) => string;
}): CommandModule<object, TableHistoryArgs> {
  return {
    command: `${spec.name} <job>`,
    describe: spec.describe,
    builder: (y) =>
      withSettingFlags(withSettingFlags(withConfigFlags(y), 'write'), 'history')
        .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
        .option('json', { type: 'boolean', default: false, describe: 'Print the report as JSON' })
        .example(...spec.example) as never,
    handler: async (args) => {
      const { job, config, logger } = await loadJobContext(args.job, args, ['destination']);
      const iceberg = config.output.format === 'iceberg';
      if (!iceberg && !spec.otherFormats) {
        throw new UserInputError(`${spec.name} works on Iceberg tables only`, {
          details: `job ${job.name} writes output.format ${config.output.format}`,
          hint: 'Only output.format: iceberg keeps snapshots; other formats delete replaced files when they are replaced.',
        });
      }
      const tables = iceberg ? (await jobTables(job)).map((t) => t.name) : [];
      // With output.catalog.uri each table is read from the catalog, and an expiry committed through it.
      const catalog = iceberg ? (await import('../iceberg/catalog/catalog-of-config.js')).catalogOfConfig(config, job.name) : null;
      const store = await openStore(config.output.destination!, { s3: config.s3, logger });
      const runId = `${spec.name}-${process.pid}-${Date.now()}`;
      const dryRun = args['dry-run'];
      // The job's exclusive lease: no run, shard or worker of the job commits meanwhile (src/state/job-lease.ts).
      const lease = dryRun ? null : await acquireJobLease(store, job.name, { runId, shard: null, command: spec.name, logger });
      try {
        const state = new WindowState(store, job.name);
        const guard = lease ? () => lease.assertHeld() : undefined;
        const report = iceberg
          ? await spec.run({ store, state, tables, retentionMs: config.output.snapshotRetentionMs, dryRun, logger, guard, catalog })
          : await spec.otherFormats!({ config, store, state, job, partitioning: config.output.partitioning, dryRun, logger, guard });
        process.stdout.write(args.json ? `${JSON.stringify({ job: job.name, ...report }, null, 2)}\n` : spec.summary(report, job.name));
      } finally {
        await lease?.release();
        await store.close?.();
      }
    },
  };
}
