import { InsightExportError, UserInputError } from '../errors.js';

/**
 * A request the sandbox answers with an HTTP error: `{"error": shortMessage}` with `status`.
 * Raised by the query parser and the routes; the server turns it into the response.
 */
export class SandboxHttpError extends InsightExportError {
  override name = 'SandboxHttpError';
  readonly status: number;
  constructor(status: number, shortMessage: string, details?: string) {
    super(shortMessage, { details });
    this.status = status;
  }
}

export function badRequest(message: string, details?: string): SandboxHttpError {
  return new SandboxHttpError(400, message, details);
}

/** Bad sandbox options (a test, the CLI or the demo configured it wrongly). */
export class SandboxOptionsError extends UserInputError {
  override name = 'SandboxOptionsError';
}
