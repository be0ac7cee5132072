import type { CommandModule } from 'yargs';
import { checkAggregateExpressions } from '../run/targets.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface ValidateArgs extends ConfigArgs {
  jobs: string[];
}

/** Checks job files and the configuration they resolve to, without contacting anything. */
export const validateCommand: CommandModule<object, ValidateArgs> = {
  command: 'validate <jobs..>',
  describe: 'Check job files (schema, addresses, signatures, ranges, config); exit 2 on the first bad one',
  builder: (y) =>
    withConfigFlags(y)
      .positional('jobs', { type: 'string', array: true, demandOption: true })
      .example('$0 validate jobs/*.yaml', 'Check every job file') as never,
  handler: async (args) => {
    for (const file of args.jobs) {
      const { job } = await loadJobContext(file, args, []);
      checkAggregateExpressions(job);
      const units = job.targets.reduce(
        (n, t) => n + t.datasets.length * t.chains.length * (t.kind === 'contract' ? t.events.length : 1),
        0,
      );
      process.stdout.write(`ok ${file}: job ${job.name}, ${job.targets.length} target(s), ${units} unit stream(s)\n`);
      for (const w of job.warnings) process.stdout.write(`  warning ${w.file}:${w.line}:${w.column} ${w.field}: ${w.message}\n`);
    }
  },
};
