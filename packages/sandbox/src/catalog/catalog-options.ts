/**
 * The sandbox's Iceberg REST catalog (served at `/iceberg` on the sandbox's port): where it keeps
 * its files, and knobs for what real catalogs do. Every knob can be changed while serving
 * (`sandbox.catalog.set(...)`).
 */

/** 500, 502 or 504: a commit the catalog applied, answered as if it had failed ("state unknown"). */
export type CommitFaultStatus = 500 | 502 | 504;

export interface CatalogAuthOptions {
  /** A static bearer token the catalog accepts. */
  token?: string;
  /** OAuth2 client credentials accepted by `POST /v1/oauth/tokens` (its tokens are accepted then). */
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of the tokens `/v1/oauth/tokens` issues (default 3600 s); an expired token gets 401. */
  tokenLifetimeSeconds?: number;
}

/** One request the catalog received and the answer it sent (for tests: every one validates against the spec). */
export interface CatalogExchange {
  method: string;
  /** The path below `/iceberg`, e.g. /v1/namespaces/demo/tables. */
  path: string;
  /** The request's JSON body (or the form fields of /v1/oauth/tokens); undefined without a body. */
  request: unknown;
  status: number;
  /** The answer's JSON body; undefined without one (204, HEAD). */
  response: unknown;
}

export interface CatalogOptions {
  /**
   * The warehouse folder (metadata files of tables without a local location); default a temporary
   * folder removed on close. With `writeObject`, an S3 prefix (s3://bucket/prefix) may be given: the
   * default location of tables created without one.
   */
  warehouse?: string;
  /**
   * Writes a metadata file of a table whose location is not local (e.g. s3://bucket/prefix/t), at
   * `<location>/metadata/<file>`, as a catalog over object storage does; without it such files go
   * under the warehouse folder (the sandbox itself has no S3 client).
   */
  writeObject?: (uri: string, text: string) => Promise<void>;
  /**
   * A prefix the catalog requires in every path (`/v1/{prefix}/namespaces...`), announced by
   * `GET /v1/config` in `overrides` (default) or `defaults`; paths without it get 404.
   */
  prefix?: string;
  prefixIn?: 'overrides' | 'defaults';
  /** Requests without `Authorization: Bearer <a valid token>` get 401 (the token endpoint excepted). */
  auth?: CatalogAuthOptions;
  /** Every catalog answer is delayed this long. */
  latencyMs?: number;
  /** The next commits are applied, then answered with these statuses in order (one per commit). */
  commitFaults?: CommitFaultStatus[];
  /**
   * The next this many commits are applied, then their connection is closed with no answer at all
   * (an answer lost on the way: the writer cannot tell whether its commit landed).
   */
  dropCommitAnswers?: number;
  /** The next this many authorised requests get 401 as for an expired token; an OAuth token so answered stays invalid. */
  expireTokens?: number;
  /** Called with every request and its answer. */
  onExchange?: (exchange: CatalogExchange) => void;
}

/** The catalog as a running sandbox shows it. */
export interface SandboxCatalog {
  /** The catalog's base URL, e.g. http://127.0.0.1:PORT/iceberg (clients add /v1/...). */
  url: string;
  /** Changes the knobs given (undefined ones stay). */
  set(patch: Partial<CatalogOptions>): void;
  /** The warehouse folder (a temporary one is made on first use). */
  warehouse(): Promise<string>;
}
