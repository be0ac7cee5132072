/**
 * A thin client of an Apache Iceberg REST catalog (open-api/rest-catalog-open-api.yaml of
 * apache/iceberg at 7f879b11366e17a676a03f15247a821751415529) over undici: the catalog's config
 * (its prefix from `overrides`, else `defaults`), namespaces, and tables (create, load, exists,
 * commit, list, drop).
 *
 * Answers are sorted by what the caller must do: a 409 on a commit is a CatalogCommitConflictError
 * (re-load, retry), a 5xx or a lost answer on a commit a CommitStateUnknownError (the commit may
 * have landed: re-load and decide), a 401 is retried once with a fresh OAuth2 token and then, like
 * a 403, a CatalogAuthError (exit 2).
 */
import { request, type Dispatcher } from 'undici';
import { CatalogAuthenticator, type CatalogAuthSettings, type OutgoingRequest } from './catalog-auth.js';
import {
  CatalogAuthError,
  CatalogCommitConflictError,
  CatalogNotFoundError,
  CatalogRequestError,
  CommitStateUnknownError,
} from './catalog-errors.js';
import type {
  CatalogConfig,
  CatalogTableMetadata,
  CreateTableRequest,
  LoadedTable,
  TableIdentifier,
  TableRequirement,
  TableUpdate,
} from './catalog-types.js';

export interface RestCatalogSettings {
  /** The catalog's base URL (clients add /v1/...), e.g. https://glue.us-east-1.amazonaws.com/iceberg. */
  uri: string;
  /** Sent as `warehouse` to /v1/config; the catalog answers the prefix for it. */
  warehouse?: string | undefined;
  auth: CatalogAuthSettings;
  /** Per-request timeout (default 60 s); an expired commit is "state unknown". */
  timeoutMs?: number | undefined;
  dispatcher?: Dispatcher | undefined;
}

interface Answer {
  status: number;
  body: unknown;
}

type Lost = { lost: unknown };

/** Namespace levels in a path: joined by the unit separator, as the spec's default `namespace-separator`. */
const nsPath = (ns: string[]) => encodeURIComponent(ns.join('\u001f'));

function serverMessage(body: unknown): { type: string; message: string } {
  const e = (body as { error?: { type?: string; message?: string } } | undefined)?.error;
  return { type: e?.type ?? '', message: e?.message ?? '(no error body)' };
}

export class RestCatalogClient {
  private readonly auth: CatalogAuthenticator;
  private readonly base: string;
  private prefix: Promise<string> | undefined;
  /** Per table (`ns.name`): commits answered 409, and answered 5xx or not at all (takeCommitAnswers). */
  private readonly commitAnswers = new Map<string, { conflicts: number; unknown: number }>();

  constructor(private readonly settings: RestCatalogSettings) {
    this.auth = new CatalogAuthenticator(settings.auth);
    this.base = settings.uri.replace(/\/+$/, '');
  }

  /** GET /v1/config (with the warehouse asked for). */
  async config(): Promise<CatalogConfig> {
    const query = this.settings.warehouse === undefined ? '' : `?warehouse=${encodeURIComponent(this.settings.warehouse)}`;
    const body = (await this.ok('GET', `/v1/config${query}`)) as Partial<CatalogConfig>;
    return { defaults: body.defaults ?? {}, overrides: body.overrides ?? {}, endpoints: body.endpoints };
  }

  async namespaceExists(ns: string[]): Promise<boolean> {
    return this.exists(await this.path(`/namespaces/${nsPath(ns)}`));
  }

  async createNamespace(ns: string[], properties: Record<string, string> = {}): Promise<void> {
    await this.ok('POST', await this.path('/namespaces'), { namespace: ns, properties });
  }

  async listNamespaces(): Promise<string[][]> {
    return ((await this.ok('GET', await this.path('/namespaces'))) as { namespaces: string[][] }).namespaces;
  }

  async createTable(ns: string[], req: CreateTableRequest): Promise<LoadedTable> {
    return loaded(await this.ok('POST', await this.path(`/namespaces/${nsPath(ns)}/tables`), req));
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    return loaded(await this.ok('GET', await this.tablePath(id)));
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    return this.exists(await this.tablePath(id));
  }

  async listTables(ns: string[]): Promise<TableIdentifier[]> {
    return ((await this.ok('GET', await this.path(`/namespaces/${nsPath(ns)}/tables`))) as { identifiers: TableIdentifier[] }).identifiers;
  }

  async dropTable(id: TableIdentifier): Promise<void> {
    await this.ok('DELETE', await this.tablePath(id));
  }

  /**
   * Commits `updates` if every requirement holds. 409: CatalogCommitConflictError; 5xx, a reset or
   * a timeout: CommitStateUnknownError (the catalog may have applied it).
   */
  async commitTable(id: TableIdentifier, requirements: TableRequirement[], updates: TableUpdate[]): Promise<LoadedTable> {
    const path = await this.tablePath(id);
    const table = [...id.namespace, id.name].join('.');
    const answer = await this.send('POST', path, { requirements, updates });
    const tally = this.commitAnswers.get(table) ?? { conflicts: 0, unknown: 0 };
    this.commitAnswers.set(table, tally);
    if ('lost' in answer || answer.status >= 500) tally.unknown++;
    if ('lost' in answer)
      throw new CommitStateUnknownError(table, `no answer: ${(answer.lost as Error)?.message ?? String(answer.lost)}`, answer.lost);
    if (answer.status === 409) {
      tally.conflicts++;
      throw new CatalogCommitConflictError(table, serverMessage(answer.body).message);
    }
    if (answer.status >= 500) throw new CommitStateUnknownError(table, `HTTP ${answer.status}: ${serverMessage(answer.body).message}`);
    return loaded(this.check(answer, 'POST', path));
  }

  /** The 409s and the lost or 5xx answers of this client's commits to a table since the last call, counted from zero again. */
  takeCommitAnswers(id: TableIdentifier): { conflicts: number; unknown: number } {
    const table = [...id.namespace, id.name].join('.');
    const tally = this.commitAnswers.get(table) ?? { conflicts: 0, unknown: 0 };
    this.commitAnswers.delete(table);
    return tally;
  }

  /** `/v1/{prefix}` + path: the prefix from the config's overrides, else its defaults, else none. */
  private async path(rest: string): Promise<string> {
    this.prefix ??= this.config().then((c) => c.overrides.prefix ?? c.defaults.prefix ?? '');
    let prefix: string;
    try {
      prefix = await this.prefix;
    } catch (err) {
      this.prefix = undefined;
      throw err;
    }
    return prefix === '' ? `/v1${rest}` : `/v1/${encodeURIComponent(prefix)}${rest}`;
  }

  private async tablePath(id: TableIdentifier): Promise<string> {
    return this.path(`/namespaces/${nsPath(id.namespace)}/tables/${encodeURIComponent(id.name)}`);
  }

  private async exists(path: string): Promise<boolean> {
    const answer = await this.send('HEAD', path);
    if (!('lost' in answer) && answer.status === 404) return false;
    this.check(answer, 'HEAD', path);
    return true;
  }

  private async ok(method: string, path: string, body?: unknown): Promise<unknown> {
    return this.check(await this.send(method, path, body), method, path);
  }

  /** The body of a 2xx; anything else as its typed error. */
  private check(answer: Answer | Lost, method: string, path: string): unknown {
    const url = `${method} ${this.base}${path}`;
    if ('lost' in answer)
      throw new CatalogRequestError(undefined, url, (answer.lost as Error)?.message ?? String(answer.lost), answer.lost);
    if (answer.status >= 200 && answer.status < 300) return answer.body;
    const { type, message } = serverMessage(answer.body);
    if (answer.status === 401 || answer.status === 403) throw new CatalogAuthError(url, answer.status, message);
    if (answer.status === 404 && /^NoSuch(Namespace|Table)/.test(type)) throw new CatalogNotFoundError(type, url, message);
    throw new CatalogRequestError(answer.status, url, `${type}: ${message}`);
  }

  /** One request; a 401 with a refreshable token is sent once more with a new one. A lost answer is returned, not thrown. */
  private async send(method: string, path: string, body?: unknown): Promise<Answer | Lost> {
    const first = await this.sendOnce(method, path, body);
    if ('lost' in first || first.status !== 401 || !this.auth.invalidate()) return first;
    return this.sendOnce(method, path, body);
  }

  private async sendOnce(method: string, path: string, body?: unknown): Promise<Answer | Lost> {
    const req: OutgoingRequest = {
      method,
      url: new URL(this.base + path),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    };
    await this.auth.authenticate(req);
    const timeout = this.settings.timeoutMs ?? 60_000;
    try {
      const res = await request(req.url, {
        method: method as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        // undici's own timeouts tick coarsely (about a second); the signal ends the request on time.
        signal: AbortSignal.timeout(timeout),
        dispatcher: this.settings.dispatcher,
      });
      const text = await res.body.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined; // an HTML error page of a proxy: the status says what happened
      }
      return { status: res.statusCode, body: parsed };
    } catch (err) {
      return { lost: err };
    }
  }
}

function loaded(body: unknown): LoadedTable {
  const b = body as { 'metadata-location'?: string; metadata: CatalogTableMetadata };
  return { metadataLocation: b['metadata-location'] ?? '', metadata: b.metadata };
}
