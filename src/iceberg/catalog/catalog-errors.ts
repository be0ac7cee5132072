/**
 * What a catalog request can end in, typed by what the run must do next: retry after re-reading
 * (a conflict), decide from the table as it is now (state unknown), or stop for a person (auth,
 * a refused request). Messages name the URL and status, never a token or a secret.
 */
import { ExitCode, InsightExportError, UserInputError } from '../../errors.js';

/** 409: the table moved (another writer committed, or a requirement is stale). Re-load and retry. */
export class CatalogCommitConflictError extends InsightExportError {
  override name = 'CatalogCommitConflictError';
  readonly retryable = true;
  constructor(table: string, serverMessage: string) {
    super(`The catalog refused the commit to ${table}: the table changed since it was loaded`, {
      details: `409 ${serverMessage}`,
      hint: 'Re-load the table and the state and commit again (a later run does so).',
    });
  }
}

/**
 * A commit answered 5xx, or no answer at all (reset, timeout): the catalog may have applied it.
 * The caller re-loads the table and decides from its current snapshot whether the commit landed.
 */
export class CommitStateUnknownError extends InsightExportError {
  override name = 'CommitStateUnknownError';
  constructor(table: string, what: string, cause?: unknown) {
    super(`The catalog's answer to the commit of ${table} was lost or an error (${what}): the commit may have landed`, {
      details: what,
      hint: 'Re-load the table: if its current snapshot is this commit\u2019s, it landed; else commit again. A later run does so.',
      cause,
    });
  }
}

/** 401 after a fresh token, or 403: credentials the catalog does not accept. */
export class CatalogAuthError extends UserInputError {
  override name = 'CatalogAuthError';
  constructor(url: string, status: number, serverMessage: string) {
    super(`The Iceberg catalog refused the credentials (HTTP ${status})`, {
      details: `${url}: ${serverMessage}`,
      hint:
        status === 403
          ? 'The principal lacks a grant on this catalog, namespace or table: grant it, or use another principal.'
          : "Check the catalog's authentication settings and the token or client credentials in the environment.",
    });
  }
}

/** 404 of a namespace or table (NoSuchNamespaceException, NoSuchTableException): the caller may create it. */
export class CatalogNotFoundError extends UserInputError {
  override name = 'CatalogNotFoundError';
  constructor(
    readonly type: string,
    url: string,
    serverMessage: string,
  ) {
    super(`The Iceberg catalog has no such ${type.includes('Namespace') ? 'namespace' : 'table'}`, { details: `${url}: ${serverMessage}` });
  }
}

/** Any other answer: 4xx (retrying cannot help: exit 2) or, outside a commit, 5xx and lost answers (a later run may: exit 1). */
export class CatalogRequestError extends InsightExportError {
  override name = 'CatalogRequestError';
  override readonly exitCode: ExitCode;
  constructor(
    readonly status: number | undefined,
    url: string,
    problem: string,
    cause?: unknown,
  ) {
    const lost = status === undefined || status >= 500;
    super(`The Iceberg catalog ${status === undefined ? 'did not answer' : `answered HTTP ${status}`}`, {
      details: `${url}: ${problem}`,
      hint: lost
        ? 'The catalog is down or failing: run again later.'
        : 'The catalog refused the request: check the catalog settings (uri, warehouse, namespace).',
      cause,
    });
    this.exitCode = lost ? ExitCode.failed : ExitCode.badInput;
  }
}

/** Catalog settings that cannot work together (an auth without its secret or endpoint): exit 2. */
export class CatalogSettingsError extends UserInputError {
  override name = 'CatalogSettingsError';
  constructor(problem: string, hint: string) {
    super(`The Iceberg catalog settings are incomplete: ${problem}`, { hint });
  }
}
