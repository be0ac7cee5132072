/**
 * The sandbox's Iceberg REST catalog: answers the requests below `/iceberg` on the sandbox's port
 * (the Apache Iceberg REST catalog protocol, open-api/rest-catalog-open-api.yaml of apache/iceberg
 * at 7f879b11366e17a676a03f15247a821751415529), with the knobs of catalog-options.ts: latency,
 * required auth and expired tokens, a required prefix, commits applied but answered 5xx or not
 * answered at all (the connection closed).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CatalogAuth } from './catalog-auth.js';
import { CatalogHttpError } from './catalog-errors.js';
import type { CatalogExchange, CatalogOptions, SandboxCatalog } from './catalog-options.js';
import { answerCatalogRoute, matchCatalogRoute, type CatalogRoute, type RouteAnswer } from './catalog-routes.js';
import { CatalogStore } from './catalog-store.js';
import type { Timers } from '../timers.js';

/** Thrown by a commit applied whose answer the knob dropCommitAnswers drops: the connection is closed instead. */
class DroppedAnswer extends Error {}

/** The path the catalog is served under. */
export const CATALOG_ROOT = '/iceberg';

export function isCatalogPath(pathname: string): boolean {
  return pathname === CATALOG_ROOT || pathname.startsWith(CATALOG_ROOT + '/');
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string, form: boolean): unknown {
  if (text === '') return undefined;
  if (form) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    throw new CatalogHttpError(400, 'BadRequestException', 'the request body is not JSON');
  }
}

export class IcebergCatalog {
  private readonly opts: CatalogOptions;
  private readonly store: CatalogStore;
  private readonly auth: CatalogAuth;
  /** Commits and creations one at a time, as a catalog's atomic swap of the metadata location. */
  private serial: Promise<unknown> = Promise.resolve();

  constructor(
    opts: CatalogOptions,
    private readonly timers: Timers,
  ) {
    this.opts = { ...opts, commitFaults: [...(opts.commitFaults ?? [])] };
    this.store = new CatalogStore(opts.warehouse, opts.writeObject);
    this.auth = new CatalogAuth(this.opts);
    this.auth.set(opts.expireTokens);
  }

  /** The handle a running sandbox gives (`sandbox.catalog`). */
  handle(origin: string): SandboxCatalog {
    return {
      url: origin + CATALOG_ROOT,
      set: (patch) => {
        const { expireTokens, commitFaults, ...rest } = patch;
        Object.assign(this.opts, rest);
        if (commitFaults) this.opts.commitFaults = [...commitFaults];
        this.auth.set(expireTokens);
      },
      warehouse: () => this.store.warehouseFolder(),
    };
  }

  close(): Promise<void> {
    return this.store.close();
  }

  async serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname.slice(CATALOG_ROOT.length) || '/';
    let request: unknown;
    let answer: RouteAnswer;
    try {
      const text = await readBody(req);
      if (this.opts.latencyMs) await this.timers.sleep(this.opts.latencyMs);
      const route = matchCatalogRoute(method, path, this.opts.prefix);
      request = parseBody(text, route.name === 'getToken');
      answer = await this.answer(route, req, url, request);
    } catch (err) {
      if (err instanceof DroppedAnswer) {
        res.destroy();
        return;
      }
      answer = err instanceof CatalogHttpError ? { status: err.status, body: err.body() } : internal(err);
    }
    this.send(res, method, answer);
    this.opts.onExchange?.({
      method,
      path,
      request,
      status: answer.status,
      response: method === 'HEAD' ? undefined : answer.body,
    } satisfies CatalogExchange);
  }

  private async answer(route: CatalogRoute, req: IncomingMessage, url: URL, body: unknown): Promise<RouteAnswer> {
    const now = Date.now();
    if (route.name === 'getToken') return this.auth.token((body as Record<string, string> | undefined) ?? {}, req, now);
    const refused = this.auth.refuse(req, now);
    if (refused) throw new CatalogHttpError(401, 'NotAuthorizedException', `not authorized: ${refused}`);
    if (route.name === 'getConfig') return { status: 200, body: this.config() };
    if (route.name !== 'createTable' && route.name !== 'updateTable')
      return answerCatalogRoute(this.store, route, url.searchParams, body, now);
    const done = this.serial.then(() => answerCatalogRoute(this.store, route, url.searchParams, body, now));
    this.serial = done.catch(() => undefined);
    const answer = await done;
    if (route.name === 'updateTable' && (this.opts.dropCommitAnswers ?? 0) > 0) {
      this.opts.dropCommitAnswers! -= 1;
      throw new DroppedAnswer('the commit was applied; its answer is dropped');
    }
    const fault = route.name === 'updateTable' ? this.opts.commitFaults?.shift() : undefined;
    if (fault) throw new CatalogHttpError(fault, 'CommitStateUnknownException', `injected: the commit was applied, answered ${fault}`);
    return answer;
  }

  /** CatalogConfig: the required prefix (in overrides or defaults) and the endpoints served. */
  private config(): Record<string, unknown> {
    const prefix = this.opts.prefix === undefined ? {} : { prefix: this.opts.prefix };
    const inDefaults = this.opts.prefixIn === 'defaults';
    const endpoints = [
      'GET /v1/{prefix}/namespaces',
      'POST /v1/{prefix}/namespaces',
      'GET /v1/{prefix}/namespaces/{namespace}',
      'HEAD /v1/{prefix}/namespaces/{namespace}',
      'DELETE /v1/{prefix}/namespaces/{namespace}',
      'GET /v1/{prefix}/namespaces/{namespace}/tables',
      'POST /v1/{prefix}/namespaces/{namespace}/tables',
      'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
      'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
      'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
      'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}',
    ];
    return { defaults: inDefaults ? prefix : {}, overrides: inDefaults ? {} : prefix, endpoints };
  }

  private send(res: ServerResponse, method: string, a: RouteAnswer): void {
    if (a.body === undefined || method === 'HEAD') {
      res.writeHead(a.status);
      res.end();
      return;
    }
    const text = JSON.stringify(a.body);
    res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

function internal(err: unknown): RouteAnswer {
  const e = new CatalogHttpError(500, 'InternalServerError', `internal error: ${(err as Error)?.message ?? String(err)}`);
  return { status: 500, body: e.body() };
}
