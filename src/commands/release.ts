import type { CommandModule } from 'yargs';
import { acquireJobLease } from '../state/job-lease.js';
import { releaseClaims } from '../state/owners.js';
import { openStore } from '../store/open-store.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface ReleaseArgs extends ConfigArgs {
  job: string;
  name?: string | undefined;
  force: boolean;
  json: boolean;
}

/** Releases the partition claims a job holds at the destination (see src/state/owners.ts). */
export const releaseCommand: CommandModule<object, ReleaseArgs> = {
  command: 'release <job>',
  describe:
    'Release the partitions a job claimed at the destination (a job renamed or retired), so that another job may export them; refused while that job has exported windows there',
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', {
        type: 'string',
        demandOption: true,
        describe: 'Job file (YAML or JSON): its destination, and by default its name',
      })
      .option('name', {
        type: 'string',
        describe: "Release the claims of the job of this name at the job file's destination (e.g. its old name)",
      })
      .option('force', { type: 'boolean', default: false, describe: 'Release even though that job has exported windows there' })
      .option('json', { type: 'boolean', default: false, describe: 'Print the released claims as JSON' })
      .example(
        '$0 release jobs/m7.yaml --name m6',
        'Job m6 was renamed m7 after a failed first run: free the partitions m6 claimed',
      ) as never,
  handler: async (args) => {
    const { job, config, logger } = await loadJobContext(args.job, args, ['destination']);
    const name = args.name ?? job.name;
    const store = await openStore(config.output.destination!, { s3: config.s3, logger });
    // That job's exclusive lease: no run, shard or worker of it claims or writes meanwhile (src/state/job-lease.ts).
    const lease = await acquireJobLease(store, name, {
      runId: `release-${process.pid}-${Date.now()}`,
      shard: null,
      command: 'release',
      logger,
    });
    try {
      const keys = await releaseClaims(store, name, { force: args.force });
      process.stdout.write(
        args.json
          ? `${JSON.stringify({ job: name, destination: store.location, released: keys }, null, 2)}\n`
          : `released ${keys.length} partition claim${keys.length === 1 ? '' : 's'} of job ${name} at ${store.location}\n`,
      );
    } finally {
      await lease.release();
      await store.close?.();
    }
  },
};
