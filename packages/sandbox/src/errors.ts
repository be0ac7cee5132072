import { InsightExportError, UserInputError } from '../../../src/shared-with-sandbox.js';

/**
 * A request the sandbox answers with an HTTP error: `{"error": shortMessage}` with `status`.
 * Raised by the query parser and the routes; the server turns it into the response.
 */
export class SandboxHttpError extends InsightExportError {
  override name = 'SandboxHttpError';
  readonly status: number;
  /** Answered with no body at all (the real indexer's Go panics). */
  readonly emptyBody: boolean;
  /** A query the real indexer's database would refuse (500 there, with the sqlErrorsAs500 option). */
  readonly sqlError: boolean;
  constructor(status: number, shortMessage: string, details?: string, flags: { emptyBody?: boolean; sqlError?: boolean } = {}) {
    super(shortMessage, { details });
    this.status = status;
    this.emptyBody = flags.emptyBody ?? false;
    this.sqlError = flags.sqlError ?? false;
  }
}

export function badRequest(message: string, details?: string): SandboxHttpError {
  return new SandboxHttpError(400, message, details);
}

/** A 400 for a query expression the real indexer passes to its database, which fails it (500). */
export function sqlError(message: string, details?: string): SandboxHttpError {
  return new SandboxHttpError(400, message, details, { sqlError: true });
}

/** Bad sandbox options (a test, the CLI or the demo configured it wrongly). */
export class SandboxOptionsError extends UserInputError {
  override name = 'SandboxOptionsError';
}
