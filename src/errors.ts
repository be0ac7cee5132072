/**
 * Every error this tool raises on purpose is an InsightExportError (viem's BaseError style):
 * a short message, the details that locate the problem, and what to do about it.
 * The CLI prints `message` and exits with `exitCode`; nothing else needs a stack trace.
 */
export interface ErrorParameters {
  /** Where and what exactly: file:line field, the request URL, the S3 key ... */
  details?: string | undefined;
  /** What the user can do about it. */
  hint?: string | undefined;
  /** Extra lines printed under the message (one fact each). */
  metaMessages?: string[] | undefined;
  cause?: unknown;
}

/**
 * The one exit-code policy (the exit-code table of the README's "Running in production"), for a scheduler to act on:
 * - 0: done.
 * - 2: no retry can cure it and a person must act: bad input, a query or capability the service
 *   refuses (a 4xx other than 408/429, an answer it can never give), authentication or
 *   authorisation (service or S3), a missing bucket, a destination that cannot hold the export.
 * - 1: a later run may cure it (the service or the store down or failing past the retries).
 * - 75: another run holds the job's lease: try later. 130: interrupted.
 * A run whose failed windows failed for both kinds of reasons exits 2: retrying alone cannot complete it.
 */
export const ExitCode = {
  ok: 0,
  failed: 1,
  badInput: 2,
  /** Another run of the same job holds its lease (EX_TEMPFAIL): try again later. */
  busy: 75,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Exit codes from least to most severe, for a command that runs several things (`run a.yaml
 * b.yaml`): an interruption ends the batch; bad input needs a person, so it outranks a transient
 * failure a retry may cure; a busy lease only asks to try later. Unknown codes rank as a failure.
 */
const SEVERITY: readonly number[] = [ExitCode.ok, ExitCode.busy, ExitCode.failed, ExitCode.badInput, ExitCode.interrupted];

/** The most severe of several exit codes (0 for none). */
export function worstExitCode(codes: Iterable<number>): number {
  const rank = (code: number) => (SEVERITY.includes(code) ? SEVERITY.indexOf(code) : SEVERITY.indexOf(ExitCode.failed));
  let worst: number = ExitCode.ok;
  for (const code of codes) if (rank(code) > rank(worst)) worst = code;
  return worst;
}

export class InsightExportError extends Error {
  override name = 'InsightExportError';
  readonly shortMessage: string;
  readonly details: string | undefined;
  readonly hint: string | undefined;
  readonly metaMessages: string[];
  /** Process exit code the CLI uses when this error ends a command. */
  readonly exitCode: ExitCode = ExitCode.failed;

  constructor(shortMessage: string, params: ErrorParameters = {}) {
    const lines = [shortMessage];
    if (params.metaMessages?.length) lines.push('', ...params.metaMessages);
    if (params.details) lines.push('', `Details: ${params.details}`);
    if (params.hint) lines.push(`Hint: ${params.hint}`);
    super(lines.join('\n'), params.cause === undefined ? undefined : { cause: params.cause });
    this.shortMessage = shortMessage;
    this.details = params.details;
    this.hint = params.hint;
    this.metaMessages = params.metaMessages ?? [];
  }

  /** This error or the first of its causes that `fn` accepts (see walk); without `fn`, the root cause. */
  walk<T>(fn: (err: unknown) => err is T): T | null;
  walk(fn?: (err: unknown) => boolean): unknown;
  walk(fn?: (err: unknown) => boolean): unknown {
    return walk(this, fn);
  }
}

/**
 * Walks an error's `cause` chain from the error itself: the first error `fn` accepts (null when it
 * accepts none), or without `fn` the last of the chain (the root cause). For any thrown value:
 * a wrapped library error, a retry that kept its last attempt's error as its cause.
 */
export function walk<T>(err: unknown, fn: (err: unknown) => err is T): T | null;
export function walk(err: unknown, fn?: (err: unknown) => boolean): unknown;
export function walk(err: unknown, fn?: (err: unknown) => boolean): unknown {
  const seen = new Set<unknown>();
  for (let e = err; ;) {
    if (fn?.(e)) return e;
    seen.add(e);
    const cause = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
    if (cause === undefined || cause === null || seen.has(cause)) return fn ? null : e;
    e = cause;
  }
}

/** Bad input from the user (job file, CLI flag, address, signature): exit code 2. */
export class UserInputError extends InsightExportError {
  override name = 'UserInputError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
}

/** The run was stopped by SIGINT/SIGTERM before it finished. */
export class InterruptedError extends InsightExportError {
  override name = 'InterruptedError';
  override readonly exitCode: ExitCode = ExitCode.interrupted;
  constructor(signal: string) {
    super(`Interrupted by ${signal}`, {
      hint: 'Run the same command again: completed windows are kept and the rest resumes.',
    });
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The exit code an error means (1 for anything not typed: a bug or an unforeseen failure). */
export function exitCodeOf(err: unknown): number {
  return err instanceof InsightExportError ? err.exitCode : ExitCode.failed;
}

/**
 * How the CLI prints an error that ends a command (or one job of several) and the exit code it
 * means: typed errors print their own message; anything else is a bug and prints its stack.
 */
export function describeError(err: unknown): { text: string; exitCode: number } {
  if (err instanceof InsightExportError) return { text: `error: ${err.message}`, exitCode: exitCodeOf(err) };
  return {
    text: `internal error (please report): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    exitCode: ExitCode.failed,
  };
}
