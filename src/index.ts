/**
 * The library API: `import { loadJob, runJob } from 'insight-export'` (docs/commands.md, "Library API").
 *
 *   const job = await loadJob('jobs/x.yaml');
 *   const report = await runJob({ job });   // config, logger: the CLI's defaults, no log lines
 *
 * The same steps as `insight-export run`; the report says what was exported and what failed, with
 * the CLI's exit_code. A bad job file throws a UserInputError (exitCode 2) from loadJob.
 */
import type { Sandbox, SandboxOptions } from '@insight-export/sandbox';

export { loadJob, parseJob, JobFileError, FileProblemsError, type ParseJobOptions, type FileProblem } from './job/index.js';
export type { Job } from './job/index.js';
export {
  resolveConfig,
  describeConfig,
  ConfigError,
  ConfigFileError,
  type CliFlags,
  type ResolveConfigInput,
  type ResolvedConfig,
} from './config/index.js';
export { createLogger, silentLogger, type Logger } from './log.js';
export { runJob, type RunJobInput, type RunJobReport } from './run/library.js';
export type { RunReport } from './run/report.js';
export { openStore, parseStoreDestination, type OpenStoreOptions, type StoreDestination } from './store/open-store.js';
export type { ObjectStore } from './store/store.js';
export { verifyDestination, type VerifyOptions, type VerifyReport } from './state/verify.js';
export { ExitCode, InsightExportError, UserInputError, InterruptedError, type ErrorParameters } from './errors.js';
export { StoreError, InvalidDestinationError, DestinationUnusableError } from './store/errors.js';
export { HttpStatusError, NetworkError, RetriesExhaustedError, RequestValidationError } from './source/errors.js';
export { LeaseHeldError, LeaseLostError } from './state/lease.js';
export { StateCorruptError } from './state/errors.js';
export type { Sandbox, SandboxOptions } from '@insight-export/sandbox';

/** The seeded read-interface server in-process (for trying jobs and tests); loaded on first use. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  return (await import('@insight-export/sandbox')).startSandbox(opts);
}
