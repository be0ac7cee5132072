import type { CommandModule } from 'yargs';
import { UserInputError } from '../errors.js';
import { parseByteSize, parseDurationMs } from '../settings/values.js';
import { compactJob, type CompactReport } from '../state/compact.js';
import { jobTables } from '../run/tables.js';
import { acquireJobLease } from '../state/job-lease.js';
import { newCompactionRunId } from '../state/run-id.js';
import { openStore } from '../store/open-store.js';
import { withSettingFlags } from '../config/flags.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface CompactArgs extends ConfigArgs {
  job: string;
  'target-size'?: string | undefined;
  'older-than'?: string | undefined;
  'dry-run': boolean;
  json: boolean;
}

/** Merges the small files of closed partitions; an Iceberg table's as one replace snapshot per table (see src/state/compact.ts). */
export const compactCommand: CommandModule<object, CompactArgs> = {
  command: 'compact <job>',
  describe: 'Merge the small files of closed partitions into files of a target size (state stays exact; crash-safe)',
  builder: (y) =>
    withSettingFlags(withConfigFlags(y), 'write')
      .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
      .option('target-size', { type: 'string', describe: 'Largest merged file, e.g. 256MB (default: output.max_bytes_per_file)' })
      .option('older-than', {
        type: 'string',
        describe: 'Only dates that ended at least this long ago, e.g. 2d (default: every date before the newest one)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the compaction report as JSON' })
      .example('$0 compact jobs/x.yaml --older-than 1d', 'Merge the files of every day that ended a day ago') as never,
  handler: async (args) => {
    const { job, config, logger } = await loadJobContext(args.job, args, ['destination']);
    let targetBytes = config.output.maxBytesPerFile;
    if (args['target-size'] !== undefined) {
      const raw = args['target-size'];
      const r = parseByteSize(/^\d+$/.test(raw.trim()) ? Number(raw) : raw);
      if (!r.ok) throw new UserInputError(`--target-size ${r.problem}`, { details: `--target-size ${raw}`, hint: 'e.g. 128MB or 1GiB' });
      targetBytes = r.value;
    }
    let olderThanMs: number | undefined;
    if (args['older-than'] !== undefined) {
      const r = parseDurationMs(args['older-than']);
      if (!r.ok)
        throw new UserInputError(`--older-than ${r.problem}`, { details: `--older-than ${args['older-than']}`, hint: 'e.g. 36h or 2d' });
      olderThanMs = r.value;
    }
    const store = await openStore(config.output.destination!, { s3: config.s3, logger });
    const runId = newCompactionRunId();
    // The job's exclusive lease: no run, shard or worker of the job writes meanwhile (src/state/job-lease.ts).
    const lease = args['dry-run'] ? null : await acquireJobLease(store, job.name, { runId, shard: null, command: 'compact', logger });
    try {
      const guard = lease ? () => lease.assertHeld() : undefined;
      const compression = config.output.format === 'ndjson' ? undefined : config.output.compression;
      // Loaded only for an Iceberg destination (Avro).
      const iceberg = config.output.format === 'iceberg' ? await import('../iceberg/index.js') : null;
      const tables = iceberg
        ? (await import('../iceberg/compaction.js')).tableCompaction({
            store,
            tables: await iceberg.committedTables(store, job.name, await jobTables(job)),
            partitioning: config.output.partitioning,
            compression: compression ?? 'zstd',
            logger,
            guard,
            // With output.catalog.uri the replace snapshots are committed through the catalog.
            catalog: (await import('../iceberg/catalog/catalog-of-config.js')).catalogOfConfig(config, job.name),
          })
        : undefined;
      const report = await compactJob({
        store,
        jobName: job.name,
        targetBytes,
        maxRows: config.output.maxRowsPerFile,
        compression,
        tables,
        runId,
        olderThanMs,
        stagingDir: config.stagingDir,
        dryRun: args['dry-run'],
        guard,
        logger,
      });
      process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : summary(report));
    } finally {
      await lease?.release();
      await store.close?.();
    }
  },
};

function summary(r: CompactReport): string {
  const lines = [
    `${r.dry_run ? 'would merge' : 'merged'}: job ${r.job}, partitions before ${r.closed_before ?? '(none)'} are closed`,
    `  windows ${r.windows_before} -> ${r.windows_after}, files ${r.files_before} -> ${r.files_after}${r.dry_run ? '' : `, bytes ${r.bytes_before} -> ${r.bytes_after}`}`,
  ];
  for (const g of r.groups)
    lines.push(
      `  ${g.unitKey} [${g.start}, ${g.end}): ${g.replaces.length} windows, ${g.sourceFiles} -> ${g.mergedFiles} files, ${g.rows} rows`,
    );
  if (r.recovered_files > 0) lines.push(`  removed ${r.recovered_files} file(s) of commits a crashed run left`);
  for (const c of r.iceberg_commits ?? [])
    lines.push(
      `  table ${c.table}: ${c.operation} snapshot ${c.snapshot_id}, files +${c.added_files} -${c.deleted_files}, metadata ${c.metadata_key}`,
    );
  return `${lines.join('\n')}\n`;
}
