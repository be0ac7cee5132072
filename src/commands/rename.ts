import type { CommandModule } from 'yargs';
import { acquireJobLease } from '../state/job-lease.js';
import { renameJob, RenameRefusedError } from '../state/rename-job.js';
import type { ResolvedConfig } from '../config/index.js';
import { openStore } from '../store/open-store.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface RenameArgs extends ConfigArgs {
  job: string;
  oldName: string;
  newName?: string | undefined;
  json: boolean;
}

/** Renames a job at its destination with its state and partition claims (src/state/rename-job.ts). */
export const renameCommand: CommandModule<object, RenameArgs> = {
  command: 'rename <job>',
  describe:
    "Rename a job at its destination: its state (_state/<old>/) and partition claims become the new name's, its files stay; an interrupted rename leaves one name whole and is finished by giving the command again",
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', {
        type: 'string',
        demandOption: true,
        describe: 'Job file (YAML or JSON) with the new name: its destination, and by default the new name',
      })
      .option('old-name', { type: 'string', demandOption: true, describe: 'The name the job had' })
      .option('new-name', { type: 'string', describe: "The new name (default: the job file's name)" })
      .option('json', { type: 'boolean', default: false, describe: 'Print what was renamed as JSON' })
      .example('$0 rename jobs/m7.yaml --old-name m6', "Job m6 was renamed m7 in its file: its exported windows become m7's") as never,
  handler: async (args) => {
    const { job, config, logger } = await loadJobContext(args.job, args, ['destination']);
    const to = args.newName ?? job.name;
    refuseCatalogNamespace(config, args.oldName, to);
    const store = await openStore(config.output.destination!, { s3: config.s3, logger });
    const runId = `rename-${process.pid}-${Date.now()}`;
    // Both names' exclusive leases: no run, shard or maintenance of either writes meanwhile.
    const leases = [];
    try {
      for (const name of [args.oldName, to])
        leases.push(await acquireJobLease(store, name, { runId, shard: null, command: 'rename', logger }));
      const r = await renameJob(store, args.oldName, to, config.output.partitioning);
      process.stdout.write(
        args.json
          ? `${JSON.stringify({ ...r, destination: store.location }, null, 2)}\n`
          : `renamed job ${r.from} to ${r.to} at ${store.location}${r.resumed ? ' (finishing an interrupted rename)' : ''}: ` +
              `${r.state_objects} state object(s) copied, ${r.claims} partition claim(s) now ${r.to}'s\n`,
      );
    } finally {
      for (const lease of leases.reverse()) await lease.release();
      await store.close?.();
    }
  },
};

/**
 * Before any write (the leases included): an Iceberg job's catalog namespace defaults to the job's
 * name, so renamed it would commit its tables into a new namespace while the old one keeps them.
 */
function refuseCatalogNamespace(config: ResolvedConfig, from: string, to: string): void {
  const o = config.output;
  if (o.format !== 'iceberg' || o.catalogUri === null || o.catalogNamespace !== null || from === to) return;
  throw new RenameRefusedError(
    `Job ${from}'s tables are in its catalog under namespace ${from}: renamed, it would commit them under ${to}`,
    {
      details: `output.catalog.uri ${o.catalogUri} without output.catalog.namespace (which defaults to the job's name)`,
      hint: `Set output.catalog.namespace: ${from} in the job file (its tables stay where they are), then give rename again.`,
    },
  );
}
