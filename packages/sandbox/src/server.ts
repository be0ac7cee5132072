import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { buildSandboxData, type ReadInterfaceSource, type SandboxData } from './data.js';
import { SandboxHttpError, SandboxOptionsError } from './errors.js';
import { SANDBOX_PROFILE_NAMES, withProfile } from './profiles.js';
import { indexedUntil } from './indexing-lag.js';
import { REORG_ROUTE, reorgRoute } from './reorg.js';
import { RequestStats, type SandboxStats } from './request-stats.js';
import { Replies } from './replies.js';
import { routeAnswers, type Answer, type RouteAnswers } from './route-answers.js';
import { matchRoute, normalisePrefix, type Matched, type RoutePrefixes } from './routes.js';
import { FAULT_ORDER, ServiceConditions } from './service-conditions.js';
import { Timers } from './timers.js';
import { validateInconsistencies } from './inconsistencies.js';
import type { FaultKind, FaultOptions, SandboxOptions } from './options.js';
import type { InconsistencyOptions } from './inconsistencies.js';
import { InconsistentService } from './inconsistent-service.js';
import { validateChainLimit } from './chain-limit.js';
import { IcebergCatalog, isCatalogPath } from './catalog/catalog-server.js';
import type { SandboxCatalog } from './catalog/catalog-options.js';

export type { SandboxStats } from './request-stats.js';
export type { FaultKind, FaultOptions, SandboxOptions, SandboxRoute } from './options.js';

/** A running server of the read interface over some data `D` (the seeded set, or one loaded from a node). */
export interface SandboxServer<D extends ReadInterfaceSource> {
  /** Base URL including pathPrefix, e.g. http://127.0.0.1:PORT/insights/v1 */
  url: string;
  /** e.g. http://127.0.0.1:PORT/api/v2 */
  explorerUrl: string;
  port: number;
  data: D;
  setFaults(f: FaultOptions | null): void;
  setLatency(l: SandboxOptions['latency'] | null): void;
  setRateLimit(r: SandboxOptions['rateLimit'] | null): void;
  /** The block time the service's index reaches (undefined: every block the data has). */
  setIndexedUntil(until: number | undefined): void;
  /** Changes the inconsistencies given (undefined ones stay); counts and draws go on where they were. */
  setInconsistencies(patch: InconsistencyOptions): void;
  /** Ends every inconsistency: the service answers consistently from now on (also `POST /_sandbox/consistent`). */
  consistent(): void;
  /** The Iceberg REST catalog served at /iceberg on the same port (src/catalog/). */
  catalog: SandboxCatalog;
  stats(): SandboxStats;
  resetStats(): void;
  close(): Promise<void>;
}

/** The sandbox over the seeded data set. */
export type Sandbox = SandboxServer<SandboxData>;

function validateOptions(opts: SandboxOptions): void {
  const rateOk = (r: number | undefined) => r === undefined || (Number.isFinite(r) && r >= 0 && r <= 1);
  if (opts.profile !== undefined && !SANDBOX_PROFILE_NAMES.includes(opts.profile)) {
    throw new SandboxOptionsError(`unknown sandbox profile ${JSON.stringify(opts.profile)}`, {
      hint: `one of ${SANDBOX_PROFILE_NAMES.join(', ')}`,
    });
  }
  for (const key of ['repeatEarlierRows', 'foreignRows', 'okErrorBody', 'okWithoutData'] as const) {
    if (!rateOk(opts[key])) throw new SandboxOptionsError(`invalid ${key} ${opts[key]}`, { hint: 'a rate is a number in 0..1' });
  }
  if (opts.faults) {
    for (const [k, v] of Object.entries(opts.faults.rates)) {
      if (!FAULT_ORDER.includes(k as FaultKind) || !rateOk(v)) {
        throw new SandboxOptionsError(`invalid fault rate ${k}=${v}`, { hint: 'each rate is a number in 0..1' });
      }
    }
    const unknown = (opts.faults.first ?? []).find((k) => !FAULT_ORDER.includes(k));
    if (unknown !== undefined)
      throw new SandboxOptionsError(`invalid first fault ${unknown}`, { hint: `one of ${FAULT_ORDER.join(', ')}` });
  }
  if (opts.rateLimit && !(opts.rateLimit.requestsPerSecond > 0)) {
    throw new SandboxOptionsError(`invalid rate limit ${opts.rateLimit.requestsPerSecond}`, { hint: 'requestsPerSecond must be > 0' });
  }
  if (opts.indexedUntil !== undefined && !Number.isSafeInteger(opts.indexedUntil)) {
    throw new SandboxOptionsError(`invalid indexedUntil ${opts.indexedUntil}`, { hint: 'a block time in unix seconds' });
  }
  validateChainLimit(opts);
  if (opts.nftPageSize !== undefined && !(Number.isInteger(opts.nftPageSize) && opts.nftPageSize > 0)) {
    throw new SandboxOptionsError(`invalid nftPageSize ${opts.nftPageSize}`);
  }
  if (opts.nftInstanceLimit !== undefined && !(Number.isInteger(opts.nftInstanceLimit) && opts.nftInstanceLimit > 0)) {
    throw new SandboxOptionsError(`invalid nftInstanceLimit ${opts.nftInstanceLimit}`, { hint: 'a positive integer (Blockscout: 9)' });
  }
  if (opts.nftTokenKeys !== undefined && !['old', 'both', 'new'].includes(opts.nftTokenKeys)) {
    throw new SandboxOptionsError(`invalid nftTokenKeys ${opts.nftTokenKeys}`, { hint: 'old, both or new' });
  }
  validateInconsistencies(opts);
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  validateOptions(opts);
  opts = withProfile(opts);
  const data =
    opts.data ??
    buildSandboxData({ seed: opts.seed, transactions: opts.transactions, richContract: opts.richContract, extraChains: opts.extraChains });
  return serveReadInterface(data, opts);
}

/**
 * Serves the read interface's routes over `data` with the server options of `opts` (prefixes,
 * latency, rate limit, faults, auth, wire quirks); `seed`, `transactions` and `data` are not used.
 */
export async function serveReadInterface<D extends ReadInterfaceSource>(data: D, opts: SandboxOptions = {}): Promise<SandboxServer<D>> {
  validateOptions(opts);
  opts = withProfile(opts);
  const prefixes: RoutePrefixes = {
    prefix: normalisePrefix(opts.pathPrefix ?? '/insights/v1'),
    explorerPrefix: normalisePrefix(opts.explorerPrefix ?? '/api/v2'),
    nftUngroupedRoute: opts.nftUngroupedRoute,
  };
  const stats = new RequestStats();
  const timers = new Timers();
  const conditions = new ServiceConditions(opts);
  const replies = new Replies(opts, stats, timers);
  let until = opts.indexedUntil;
  const full = indexedUntil(data, () => until);
  const answer = routeAnswers(full, opts, stats);
  const service = new InconsistentService({ data, full, fullUntil: () => until, opts, stats, replies });
  const catalog = new IcebergCatalog(opts.catalog ?? {}, timers);
  const onRequest = requestHandler({ data, opts, prefixes, stats, timers, conditions, replies, answer, service, catalog });

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    onRequest(req, res).catch((err) => {
      if (!res.headersSent) replies.sendError(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`);
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.keepAliveTimeout = 5_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const origin = `http://${urlHost}:${port}`;

  return {
    url: origin + prefixes.prefix,
    explorerUrl: origin + prefixes.explorerPrefix,
    port,
    data,
    setFaults: (f) => {
      if (f) validateOptions({ faults: f });
      conditions.setFaults(f);
    },
    setLatency: (l) => conditions.setLatency(l),
    setRateLimit: (r) => {
      if (r) validateOptions({ rateLimit: r });
      conditions.setRateLimit(r);
    },
    setIndexedUntil: (t) => {
      validateOptions({ indexedUntil: t });
      until = t;
    },
    setInconsistencies: (patch) => service.inconsistencies.set(patch),
    consistent: () => service.inconsistencies.consistent(),
    catalog: catalog.handle(origin),
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    close: async () => {
      await new Promise<void>((resolve) => {
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      });
      await catalog.close();
    },
  };
}

interface RequestContext {
  data: ReadInterfaceSource;
  opts: SandboxOptions;
  prefixes: RoutePrefixes;
  stats: RequestStats;
  timers: Timers;
  conditions: ServiceConditions;
  replies: Replies;
  answer: RouteAnswers;
  service: InconsistentService;
  catalog: IcebergCatalog;
}

/**
 * One request, in the order a real deployment meets it: the route, the reorganisation control
 * route, latency, the rate limit, credentials, a 404, then an injected fault or the answer.
 */
function requestHandler(c: RequestContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { conditions, replies, stats } = c;
  return async (req, res) => {
    stats.request();
    let m: Matched | null;
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://sandbox.local');
      m = matchRoute(req.method ?? 'GET', url.pathname, c.prefixes);
    } catch (err) {
      const known = err instanceof SandboxHttpError;
      replies.sendError(res, known ? err.status : 400, known ? err.shortMessage : 'bad request');
      return;
    }
    if (url.pathname === REORG_ROUTE && req.method === 'POST') return controlReorg(c, url, res);
    if (url.pathname === CONSISTENT_ROUTE && req.method === 'POST') return controlConsistent(c, res);
    if (isCatalogPath(url.pathname)) return c.catalog.serve(req, res, url);
    stats.route(m?.route ?? 'unknown');

    const delay = conditions.delayMs();
    if (delay > 0) await c.timers.sleep(delay);
    if (!conditions.takeToken()) {
      replies.sendError(res, 429, 'rate limit exceeded', { 'retry-after': String(conditions.retryAfterSeconds) });
      return;
    }
    if (!conditions.authorised(req)) {
      replies.sendError(res, 401, 'unauthorized: missing or invalid x-client-id / x-secret-key');
      return;
    }
    if (!m) {
      replies.sendError(res, 404, `not found: ${req.method} ${url.pathname}`);
      return;
    }
    const fault = conditions.pickFault(m.route);
    if (fault) stats.fault(fault);
    if (fault && answeredByFault(c, fault, res)) return;

    const { status, body } = await c.service.answer(m, url, (asked, source) => answerOrError(c, m, asked, req, source));
    if (fault === 'truncate' || fault === 'stall') replies.sendCut(res, status, body, fault, conditions.faults?.stallMs ?? 60_000);
    else replies.send(res, status, body);
  };
}

/** `POST /_sandbox/consistent`: every inconsistency ends (SandboxServer.consistent). */
const CONSISTENT_ROUTE = '/_sandbox/consistent';

function controlConsistent(c: RequestContext, res: ServerResponse): void {
  c.service.inconsistencies.consistent();
  c.replies.send(res, 200, { consistent: true });
}

function controlReorg(c: RequestContext, url: URL, res: ServerResponse): void {
  try {
    c.replies.send(res, 200, reorgRoute(c.data, url));
  } catch (err) {
    const known = err instanceof SandboxHttpError;
    c.replies.send(res, known ? err.status : 500, { error: known ? err.shortMessage : (err as Error).message });
  }
}

/** Faults that replace the answer (an error status, a reset); true when one did. Truncated and stalled bodies cut the answer instead. */
function answeredByFault(c: RequestContext, fault: FaultKind, res: ServerResponse): boolean {
  switch (fault) {
    case 'http500':
    case 'http502':
    case 'http503': {
      const status = Number(fault.slice(4));
      if (status !== 500 && c.conditions.faults?.htmlPages) c.replies.sendHtmlPage(res, status);
      else c.replies.sendError(res, status, `injected fault: HTTP ${status}`);
      return true;
    }
    case 'http429': {
      const ra = c.conditions.faults?.retryAfterSeconds;
      c.replies.sendError(res, 429, 'rate limit exceeded (injected)', ra === undefined ? {} : { 'retry-after': String(ra) });
      return true;
    }
    case 'reset':
      c.replies.reset(res, c.conditions.faultCoin());
      return true;
    default:
      return false;
  }
}

/** The route's answer, or the error answer in the service's shape for what it threw. */
async function answerOrError(c: RequestContext, m: Matched, url: URL, req: IncomingMessage, source?: ReadInterfaceSource): Promise<Answer> {
  try {
    return await c.answer(m, url, req, source);
  } catch (err) {
    if (err instanceof SandboxHttpError && err.emptyBody) return { status: err.status, body: undefined };
    if (err instanceof SandboxHttpError && err.sqlError && c.opts.sqlErrorsAs500) {
      return { status: 500, body: c.replies.errorBody(500, 'An unexpected error occurred.') };
    }
    if (err instanceof SandboxHttpError) return { status: err.status, body: c.replies.errorBody(err.status, err.shortMessage) };
    return { status: 500, body: c.replies.errorBody(500, `internal error: ${(err as Error)?.message ?? String(err)}`) };
  }
}
