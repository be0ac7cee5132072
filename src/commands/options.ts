import type { Argv } from 'yargs';
import { cliFlags, flagSettings, withSettingFlags } from '../config/flags.js';
import { resolveConfig, type ResolvedConfig } from '../config/index.js';
import { loadJob } from '../job/index.js';
import type { ParseJobOptions } from '../job/load.js';
import type { Job } from '../job/schema.js';
import { createLogger, type Logger } from '../log.js';

/** Flags every job command takes (the settings table's "job" group); each overrides the job file, environment and config file. */
export function withConfigFlags<T>(y: Argv<T>) {
  return withSettingFlags(y, 'job');
}

/** Arguments of a job command: the table's flags by their names ("base-url", "max-attempts" ...). */
export type ConfigArgs = Record<string, unknown> & { config?: string | undefined };

export { cliFlags };

export interface JobContext {
  job: Job;
  config: ResolvedConfig;
  logger: Logger;
}

/** Loads the job and resolves the configuration once: defaults < config file < env < job < flags. */
export async function loadJobContext(
  jobFile: string,
  args: ConfigArgs,
  require: ('source' | 'destination')[],
  jobOptions: ParseJobOptions = {},
): Promise<JobContext> {
  const job = await loadJob(jobFile, jobOptions);
  const config = resolveConfig({ job, cliFlags: cliFlags(args), configFile: args.config, require });
  const logger = createLogger({ level: config.logLevel, pretty: config.logFormat === 'pretty' });
  for (const w of job.warnings) logger.warn({ file: w.file, line: w.line, field: w.field }, w.message);
  return { job, config, logger };
}

/**
 * The job settings' flags a command was given (destination, service ...), as shell words: what a
 * command it names for the same job (a repair, a removal) must be given too.
 */
export function givenJobFlags(args: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const s of flagSettings('job')) {
    const name = s.flag!.name;
    const value = args[name];
    if (value === undefined || value === false || s.key === 'log_level' || s.key === 'log_format') continue;
    out.push(`--${name}`, ...(value === true ? [] : [shellWord(String(value))]));
  }
  return out;
}

const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`);
