import type { CommandModule } from 'yargs';
import { describeConfig, resolveConfig } from '../config/index.js';
import { cliFlags, loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';

interface ConfigCommandArgs extends ConfigArgs {
  job?: string | undefined;
}

/** Prints the resolved settings (of a job, when given) and where each came from; secrets never. */
export const configCommand: CommandModule<object, ConfigCommandArgs> = {
  command: 'config [job]',
  describe: 'Show the resolved settings and where each came from (defaults < config file < environment < job < flags)',
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', { type: 'string', describe: 'Job file whose settings to resolve (optional)' })
      .example('$0 config jobs/demo.yaml --format ndjson', 'What a run of the demo would use') as never,
  handler: async (args) => {
    const config = args.job
      ? (await loadJobContext(args.job, args, [])).config
      : resolveConfig({ cliFlags: cliFlags(args), configFile: args.config });
    process.stdout.write(describeConfig(config).replace(/\n?$/, '\n'));
  },
};
