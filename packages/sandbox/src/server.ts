import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { buildSandboxData, type ReadInterfaceSource, type SandboxData } from './data.js';
import { SandboxHttpError, SandboxOptionsError } from './errors.js';
import { SANDBOX_PROFILE_NAMES, withProfile, type SandboxProfile } from './profiles.js';
import { indexedUntil } from './indexing-lag.js';
import { REORG_ROUTE, reorgRoute } from './reorg.js';
import { RequestStats, type SandboxStats } from './request-stats.js';
import { Replies } from './replies.js';
import { routeAnswers, type Answer, type RouteAnswers } from './route-answers.js';
import { matchRoute, normalisePrefix, type Matched, type RoutePrefixes } from './routes.js';
import { FAULT_ORDER, ServiceConditions } from './service-conditions.js';
import { Timers } from './timers.js';
import { validateInconsistencies, type InconsistencyOptions } from './inconsistencies.js';
import { InconsistentService } from './inconsistent-service.js';

export type SandboxRoute = 'transactions' | 'events' | 'resolve' | 'decode' | 'nft' | 'nft-list';
export type FaultKind = 'http500' | 'http502' | 'http503' | 'http429' | 'reset' | 'truncate' | 'stall';

export interface FaultOptions {
  /** Each 0..1, per request; at most one fault per request (the rates add up). */
  rates: Partial<Record<FaultKind, number>>;
  /** Stalled body: headers + part of the body, then silence for this long (default 60_000), then the socket closes. */
  stallMs?: number;
  /** Sent with injected 429s (header omitted when undefined). */
  retryAfterSeconds?: number;
  /** Fault decisions come from a PRNG seeded with this (default 1). */
  seed?: number;
  /** The first requests that get faults get these, in order; the rates apply after them. */
  first?: FaultKind[];
  /** Routes that get faults (default: all). */
  routes?: SandboxRoute[];
  /** Injected 502/503 answered with an HTML error page, as a load balancer or CDN in front of the service sends. */
  htmlPages?: boolean;
}

/** The sandbox's options; those of a service answering inconsistently for a while are in InconsistencyOptions (inconsistencies.ts). */
export interface SandboxOptions extends InconsistencyOptions {
  /** Default 42; same seed => byte-identical data. */
  seed?: number;
  /** Total transactions across all chains, default 20_000. */
  transactions?: number;
  /** Use a prebuilt data set (same shape as buildSandboxData) instead of building one. */
  data?: SandboxData;
  host?: string;
  port?: number;
  /** Default '/insights/v1'. */
  pathPrefix?: string;
  /** Default '/api/v2'. */
  explorerPrefix?: string;
  latency?: { fixedMs: number; jitterMs: number };
  /** Over the limit: 429 {"error"} + Retry-After (default 1 s). */
  rateLimit?: { requestsPerSecond: number; retryAfterSeconds?: number };
  faults?: FaultOptions;
  /** Collections per NFT page, default 50. */
  nftPageSize?: number;
  /** When set, requests without a matching x-client-id or x-secret-key get 401. */
  auth?: { clientId?: string; secretKey?: string };
  /**
   * Named defaults for the behaviour options below (src/sandbox/profiles.ts): 'contract' (the
   * default), 'indexer' (every behaviour of the real indexer), 'hostile' (indexer + misbehaviours).
   * Options set explicitly override the profile's.
   */
  profile?: SandboxProfile;
  /** Return self-transfers twice on the wallet route, adjacent, paging otherwise exact (a part of `walletUnion`). */
  duplicateSelfTransfers?: boolean;
  /**
   * The wallet route as the indexer's UNION ALL query: from- and to-halves each `LIMIT 2*limit
   * OFFSET page*limit`, the union `LIMIT limit OFFSET page*limit` without ORDER BY, the halves in
   * an order drawn per request; group_by with aggregates (or aggregates with sort_by) a 500,
   * aggregates alone one row per half.
   */
  walletUnion?: boolean;
  /** Rows tied on the sort key come in a new order on each request; without sort_by (rows or groups), no order at all. */
  unstableOrder?: boolean;
  /** The indexer's limit and page: default limit 5, no cap on either; limit <= 0 means no LIMIT, page < 0 no OFFSET. */
  indexerLimits?: boolean;
  /**
   * Rate (0..1) of list pages after the first that start early, repeating rows an earlier page
   * carried in earlier blocks (pages of the plain query: with `walletUnion` the wallet route repeats rows its own way).
   */
  repeatEarlierRows?: number;
  /**
   * Rate (0..1) of list rows followed by a row at the same position of another wallet (the wallet
   * route), contract or event (the events route), or chain: a server whose filters let them
   * through. They take the place of the chain's last rows under the limit; counted in stats().
   */
  foreignRows?: number;
  /** Rate (0..1) of list answers that are HTTP 200 with an `{"error": ...}` body. */
  okErrorBody?: number;
  /** Rate (0..1) of list answers asked for rows that are HTTP 200 with `data: null` or without `data`. */
  okWithoutData?: number;
  /** Some rows use the older wire types: block_number as a string, value as a number. */
  legacyTypes?: boolean;
  /** Some decoded bytes values come as base64 or arrays of numbers instead of hex. */
  decodedVariants?: boolean;
  /**
   * Decoded values as the open-source indexer serialises them: base64 bytes, bytesN as number
   * arrays, big ints in tuples and fixed arrays as bare JSON numbers, events decoded without
   * decode=true, `{"name":""}` when decoding fails (src/sandbox/go-values.ts).
   */
  goValues?: boolean;
  /**
   * Aggregations as the open-source indexer sends them: RFC 3339 times, quoted UInt256, groups
   * in no order, one row of zeros for an ungrouped aggregate over no rows, and on the wallet
   * route one row per UNION half (aggregate only) or a 500 (group_by with aggregate).
   */
  goAggregations?: boolean;
  /** Build the data set with the `rich` contract (tuple, array, bytes, negative-int arguments). */
  richContract?: boolean;
  /** Build the data set with this many small chains more (see BuildOptions.extraChains). */
  extraChains?: number;
  /** Answer in br or gzip when the request accepts it, as a CDN does (cdn-compression.ts); default true. */
  compress?: boolean;
  // What the real service does, one option per behaviour (profiles.ts turns them all on).
  /** Blockscout: at most this many token instances per NFT collection, highest id first (Blockscout: 9). */
  nftInstanceLimit?: number;
  /** Blockscout: an ERC-1155 collection's `amount` is its number of distinct token instances. */
  nftDistinctAmount?: boolean;
  /** Blockscout: NFT token, owner and holder addresses in EIP-55 checksum case. */
  nftChecksummed?: boolean;
  /** Keys of an NFT `token`: address/holders (old, default), address_hash/holders_count (new), or both. */
  nftTokenKeys?: 'old' | 'both' | 'new';
  /** Blockscout: NFT collections ERC-721, then ERC-1155, then ERC-404, each by contract hash. */
  nftTypeOrder?: boolean;
  /** Blockscout: next_page_params echoes the request's parameters plus the cursor and items_count. */
  nftEchoPageParams?: boolean;
  /** Blockscout: also serve the ungrouped addresses/<hash>/nft route, paging every instance. */
  nftUngroupedRoute?: boolean;
  /** insight: error bodies {code, message, support_id} instead of {error}. */
  insightErrorBodies?: boolean;
  /** insight: an unparsable event signature, or a block resolve does not have, answers 500 with an empty body (a Go panic). */
  panicsAs500?: boolean;
  /** insight: an aggregate expression or filter column the query engine rejects answers 500 "An unexpected error occurred.". */
  sqlErrorsAs500?: boolean;
  /** insight: meta fields omitted when zero (total_pages never sent), data/aggregations omitted rather than null, resolve of nothing `data: {}`. */
  omitEmpty?: boolean;
  /** insight: resolve takes decimal numbers and 0x inputs of 10, 42 or 66 characters only (else 400 invalid input); no type unknown, no data.address. */
  strictResolve?: boolean;
  /**
   * The service's index reaches this block time only (unix seconds): later rows, counts and blocks
   * are not served, as an indexer lagging the chain or back-filling it (src/sandbox/indexing-lag.ts).
   * Moved while serving with setIndexedUntil.
   */
  indexedUntil?: number;
  /** insight: records as its ClickHouse columns: to_address "" for creations, function_selector "" for plain transfers, fee fields "0" on legacy transactions, max_fee_per_blob_gas and blob_versioned_hashes. */
  indexerRecords?: boolean;
}

export type { SandboxStats } from './request-stats.js';

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
  const onRequest = requestHandler({ data, opts, prefixes, stats, timers, conditions, replies, answer, service });

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
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    close: () =>
      new Promise<void>((resolve) => {
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      }),
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
