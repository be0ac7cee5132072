/**
 * `runJob` as the library exports it: the CLI's run with the CLI's defaults, and one way to learn
 * how a run went, its report. See docs/commands.md, "Library API".
 */
import { resolveConfig, type ResolvedConfig } from '../config/index.js';
import { describeError, ExitCode } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { failureReportOf, type RunReport } from './report.js';
import { runJob as runOnce, type RunJobInput as RunOnceInput } from './run-job.js';

export interface RunJobInput extends Omit<RunOnceInput, 'config' | 'logger'> {
  /**
   * Default: resolved as `insight-export run` resolves it, without flags: built-in defaults <
   * config/default.yaml (or INSIGHT_EXPORT_CONFIG) < environment < the job file.
   */
  config?: ResolvedConfig;
  /** Default: no log lines (the report says what happened); `createLogger()` logs as the CLI does. */
  logger?: Logger;
}

/** The run's report (as `run --json` prints it) and the exit code `insight-export run` gives the run. */
export type RunJobReport = RunReport & { exit_code: number };

/**
 * Runs a job once, as `insight-export run` does, and returns its report: status "succeeded",
 * "failed" (failed windows in `failed`, or the `error` that ended the run: the service down, a
 * destination refused, a chain the service does not serve ...) or "interrupted" (`signal`
 * aborted), with the CLI's `exit_code` (0, 1 for what a later run can fix, 2 for what it cannot,
 * 130). Throws only when no run started: a ConfigError (exitCode 2) while resolving the default
 * configuration, or a LeaseHeldError (exitCode 75) when another run holds the job.
 */
export async function runJob(input: RunJobInput): Promise<RunJobReport> {
  const config = input.config ?? resolveConfig({ job: input.job, require: ['source', 'destination'] });
  const logger = input.logger ?? silentLogger;
  try {
    const report = await runOnce({ ...input, config, logger });
    return { ...report, exit_code: exitCodeOf(report) };
  } catch (err) {
    const report = failureReportOf(err);
    if (!report) throw err;
    return { ...report, exit_code: describeError(err).exitCode };
  }
}

function exitCodeOf(report: RunReport): number {
  if (report.status === 'succeeded') return ExitCode.ok;
  return report.status === 'interrupted' ? ExitCode.interrupted : ExitCode.failed;
}
