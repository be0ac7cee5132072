import type { CommandModule } from 'yargs';
import type { TableCommitted } from '../iceberg/index.js';
import { withWalletAddresses } from '../run/retire-wallets.js';
import { acquireJobLease } from '../state/job-lease.js';
import { keepStreams, removedStreams, retireStreams } from '../state/removed-streams.js';
import { WindowState } from '../state/window-state.js';
import { openStore } from '../store/open-store.js';
import { icebergRetirement } from './retire-iceberg.js';
import { CommandArgumentError } from './source-options.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface RetireArgs extends ConfigArgs {
  job: string;
  delete?: boolean | undefined;
  keep?: boolean | undefined;
  json: boolean;
}

/** The streams a job no longer has, still at its destination: listed, deleted or kept (src/state/removed-streams.ts). */
export const retireCommand: CommandModule<object, RetireArgs> = {
  command: 'retire <job>',
  describe:
    'The targets and chains taken out of a job whose windows are still at its destination: list them, delete them (--delete: files, state and claims) or keep them (--keep: plan and run stop naming them)',
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON) as it is now' })
      .option('delete', {
        type: 'boolean',
        default: false,
        describe: 'Delete their files, their state and the partition claims only they need',
      })
      .option('keep', { type: 'boolean', describe: 'Keep them as they are; plan and run stop naming them' })
      .option('json', { type: 'boolean', default: false, describe: 'Print what was found and done as JSON' })
      .example('$0 retire jobs/x.yaml', 'Which streams did the last edit of the job leave behind?')
      .example('$0 retire jobs/x.yaml --delete', 'Remove chain 1 after `chains: [1, 8453]` became `[8453]`') as never,
  handler: async (args) => {
    if (args.delete && args.keep)
      throw new CommandArgumentError('retire takes --delete or --keep, not both', {
        hint: 'Give one: --delete removes the streams, --keep keeps them.',
      });
    const loaded = await loadJobContext(args.job, args, ['destination']);
    const { config, logger } = loaded;
    // Before any write: the job's streams are named by address (the source opened only for wallet names).
    const job = await withWalletAddresses(loaded.job, config, logger, 'retire');
    const store = await openStore(config.output.destination!, { s3: config.s3, logger });
    const runId = `retire-${process.pid}-${Date.now()}`;
    const lease =
      args.delete || args.keep ? await acquireJobLease(store, job.name, { runId, shard: null, command: 'retire', logger }) : null;
    try {
      const listed = await new WindowState(store, job.name).completedIntervals();
      const found = await removedStreams(store, job, listed, { withKept: args.delete === true });
      const units = found.map((s) => s.unit);
      const iceberg =
        args.delete && config.output.format === 'iceberg' ? await icebergRetirement(job, config, logger, { store, runId }) : null;
      const done = args.delete
        ? {
            deleted: await retireStreams(store, job, units, config.output.partitioning, { tables: iceberg?.tables }),
            ...(iceberg ? { iceberg_commits: iceberg.commits } : {}),
          }
        : args.keep
          ? (await keepStreams(store, job.name, units), { kept: units })
          : {};
      process.stdout.write(
        args.json
          ? `${JSON.stringify({ job: job.name, destination: store.location, streams: found, ...done }, null, 2)}\n`
          : text(job.name, found, done),
      );
    } finally {
      await lease?.release();
      await store.close?.();
    }
  },
};

function text(
  job: string,
  found: { unit: string; windows: number }[],
  done: { deleted?: Awaited<ReturnType<typeof retireStreams>>; kept?: string[]; iceberg_commits?: TableCommitted[] },
): string {
  const lines = [`job ${job}: ${found.length} stream(s) no longer in the job with windows at the destination`];
  for (const s of found) lines.push(`  ${s.unit}: ${s.windows} window(s)`);
  const d = done.deleted;
  if (d)
    lines.push(
      `deleted ${d.streams.length} stream(s)${d.resumed ? ' (finishing an interrupted removal)' : ''}: ${d.files} file(s), ${d.state_objects} state object(s), ${d.claims} partition claim(s)`,
    );
  for (const c of done.iceberg_commits ?? [])
    lines.push(
      `  table ${c.table}: ${c.operation} snapshot ${c.snapshot_id}, files +${c.added_files} -${c.deleted_files} (kept for older snapshots)`,
    );
  if (done.kept) lines.push(`kept ${done.kept.length} stream(s): plan and run no longer name them`);
  else if (found.length > 0 && !d) lines.push('next: retire <job file> --delete removes their files, state and claims; --keep keeps them');
  return `${lines.join('\n')}\n`;
}
