import type { CommandModule } from 'yargs';
import { UserInputError } from '../errors.js';
import { parseByteSize, parseDurationMs } from '../settings/values.js';
import { compactJob, type CompactReport } from '../state/compact.js';
import { acquireLease, leaseName } from '../state/lease.js';
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

/** Merges the small files of closed partitions (see src/state/compact.ts). */
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
    if (config.output.format === 'iceberg') {
      // Compaction deletes the files it merges at once: readers of an Iceberg table's snapshot would meet missing files.
      throw new UserInputError('compact does not rewrite Iceberg tables yet', {
        details: `job ${job.name} writes output.format iceberg`,
        hint: 'An Iceberg table is read through its snapshot, so small files cost no listing; leave it as it is.',
      });
    }
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
    const runId = `compact-${process.pid}-${Date.now()}`;
    // The job's own lease: no run of the (unsharded) job writes state meanwhile.
    const lease = args['dry-run'] ? null : await acquireLease(store, job.name, { runId, name: leaseName(null), logger });
    try {
      const report = await compactJob({
        store,
        jobName: job.name,
        targetBytes,
        maxRows: config.output.maxRowsPerFile,
        compression: config.output.format === 'parquet' ? config.output.compression : undefined,
        olderThanMs,
        stagingDir: config.stagingDir,
        dryRun: args['dry-run'],
        guard: lease ? () => lease.assertHeld() : undefined,
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
  return `${lines.join('\n')}\n`;
}
