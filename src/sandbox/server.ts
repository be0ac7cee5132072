import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { EventRecord, TransactionRecord } from '../source/records.js';
import { buildSandboxData, type ListResult, type ReadInterfaceSource, type SandboxData } from './data.js';
import { SandboxHttpError, SandboxOptionsError, badRequest } from './errors.js';
import { okMisbehaviour, type OkMisbehaviour } from './ok-misbehaviour.js';
import { SANDBOX_PROFILE_NAMES, withProfile, type SandboxProfile } from './profiles.js';
import { jsonText } from './go-values.js';
import { Rng, hash3 } from './prng.js';
import { CONTRACT_PAGING, INDEXER_PAGING, parseChainIds } from './query.js';
import { REORG_ROUTE, reorgRoute } from './reorg.js';
import { cdnCompress, cdnEncoding } from './cdn-compression.js';
import { parseEventSignature } from './abi.js';
import { indexerTransaction, isIndexerSearchInput, omitEmptyMeta } from './indexer-wire.js';

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
  /** Routes that get faults (default: all). */
  routes?: SandboxRoute[];
}

export interface SandboxOptions {
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
  /** insight: records as its ClickHouse columns: to_address "" for creations, function_selector "" for plain transfers, fee fields "0" on legacy transactions, max_fee_per_blob_gas and blob_versioned_hashes. */
  indexerRecords?: boolean;
}

export interface SandboxStats {
  requests: number;
  byStatus: Record<number, number>;
  byRoute: Record<string, number>;
  faultsInjected: Record<string, number>;
}

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
  stats(): SandboxStats;
  resetStats(): void;
  close(): Promise<void>;
}

/** The sandbox over the seeded data set. */
export type Sandbox = SandboxServer<SandboxData>;

/** TCP RST where the platform allows it (the peer sees ECONNRESET), else a plain close. */
function resetSocket(socket: Socket): void {
  const s = socket as Socket & { resetAndDestroy?: () => Socket };
  if (typeof s.resetAndDestroy === 'function' && !s.destroyed) s.resetAndDestroy();
  else s.destroy();
}

const FAULT_ORDER: FaultKind[] = ['http500', 'http502', 'http503', 'http429', 'reset', 'truncate', 'stall'];
const MAX_BODY = 16 * 1024 * 1024;

interface Matched {
  route: SandboxRoute;
  params: string[];
}

function isAggregated(q: { groupBy: unknown[]; aggregates: unknown[] }): boolean {
  return q.groupBy.length > 0 || q.aggregates.length > 0;
}

function normalisePrefix(p: string): string {
  const s = p.startsWith('/') ? p : `/${p}`;
  return s.endsWith('/') ? s.slice(0, -1) : s;
}

function validateOptions(opts: SandboxOptions): void {
  const rateOk = (r: number | undefined) => r === undefined || (Number.isFinite(r) && r >= 0 && r <= 1);
  if (opts.profile !== undefined && !SANDBOX_PROFILE_NAMES.includes(opts.profile)) {
    throw new SandboxOptionsError(`unknown sandbox profile ${JSON.stringify(opts.profile)}`, {
      hint: `one of ${SANDBOX_PROFILE_NAMES.join(', ')}`,
    });
  }
  for (const key of ['repeatEarlierRows', 'okErrorBody', 'okWithoutData'] as const) {
    if (!rateOk(opts[key])) throw new SandboxOptionsError(`invalid ${key} ${opts[key]}`, { hint: 'a rate is a number in 0..1' });
  }
  if (opts.faults) {
    for (const [k, v] of Object.entries(opts.faults.rates)) {
      if (!FAULT_ORDER.includes(k as FaultKind) || !rateOk(v)) {
        throw new SandboxOptionsError(`invalid fault rate ${k}=${v}`, { hint: 'each rate is a number in 0..1' });
      }
    }
  }
  if (opts.rateLimit && !(opts.rateLimit.requestsPerSecond > 0)) {
    throw new SandboxOptionsError(`invalid rate limit ${opts.rateLimit.requestsPerSecond}`, { hint: 'requestsPerSecond must be > 0' });
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
  const prefix = normalisePrefix(opts.pathPrefix ?? '/insights/v1');
  const explorerPrefix = normalisePrefix(opts.explorerPrefix ?? '/api/v2');
  const nftPageSize = opts.nftPageSize ?? 50;
  const paging = opts.indexerLimits ? INDEXER_PAGING : CONTRACT_PAGING;
  const seed = opts.seed ?? 42;
  // Whatever varies per list request derives from this counter, so a run of requests is reproducible.
  let listRequests = 0;
  const listOpts = (requestKey: number) => ({
    duplicateSelfTransfers: opts.duplicateSelfTransfers,
    decodedVariants: opts.decodedVariants,
    walletUnion: opts.walletUnion,
    unstableOrder: opts.unstableOrder,
    repeatEarlierRows: opts.repeatEarlierRows,
    goValues: opts.goValues,
    goAggregations: opts.goAggregations,
    requestKey,
  });

  let faults: FaultOptions | null = null;
  let faultRng = new Rng(1, 0xfa);
  let latency = opts.latency ?? null;
  const latencyRng = new Rng(opts.seed ?? 42, 0x1a7);
  let rateLimit: SandboxOptions['rateLimit'] | null = opts.rateLimit ?? null;
  let tokens = 0;
  let lastRefill = 0;
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();

  const setFaults = (f: FaultOptions | null) => {
    if (f) validateOptions({ faults: f });
    faults = f;
    faultRng = new Rng(f?.seed ?? 1, 0xfa);
  };
  const setRateLimit = (r: SandboxOptions['rateLimit'] | null) => {
    if (r) validateOptions({ rateLimit: r });
    rateLimit = r;
    tokens = r ? r.requestsPerSecond : 0;
    lastRefill = performance.now();
  };
  setFaults(opts.faults ?? null);
  setRateLimit(rateLimit);

  let stats: SandboxStats = { requests: 0, byStatus: {}, byRoute: {}, faultsInjected: {} };
  const countStatus = (status: number) => (stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1);
  const countFault = (kind: string) => (stats.faultsInjected[kind] = (stats.faultsInjected[kind] ?? 0) + 1);

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });

  function match(method: string, path: string): Matched | null {
    let segs: string[];
    const under = (p: string) => path.startsWith(p + '/');
    try {
      if (under(prefix)) {
        segs = path
          .slice(prefix.length + 1)
          .split('/')
          .map(decodeURIComponent);
        if (method === 'GET' && segs.length === 3 && segs[0] === 'wallets' && segs[2] === 'transactions')
          return { route: 'transactions', params: [segs[1]!] };
        if (method === 'GET' && segs.length === 3 && segs[0] === 'events') return { route: 'events', params: [segs[1]!, segs[2]!] };
        if (method === 'GET' && segs.length === 2 && segs[0] === 'resolve') return { route: 'resolve', params: [segs[1]!] };
        if (method === 'POST' && segs.length === 2 && segs[0] === 'decode') return { route: 'decode', params: [segs[1]!] };
      } else if (under(explorerPrefix)) {
        segs = path
          .slice(explorerPrefix.length + 1)
          .split('/')
          .map(decodeURIComponent);
        if (method === 'GET' && segs.length === 4 && segs[0] === 'addresses' && segs[2] === 'nft' && segs[3] === 'collections') {
          return { route: 'nft', params: [segs[1]!] };
        }
        if (opts.nftUngroupedRoute && method === 'GET' && segs.length === 3 && segs[0] === 'addresses' && segs[2] === 'nft') {
          return { route: 'nft-list', params: [segs[1]!] };
        }
      }
    } catch {
      throw badRequest('malformed URL path encoding');
    }
    return null;
  }

  /**
   * Rows of a list answer as sent: chain_id a string, no `decoded` unless asked for, and with
   * `legacyTypes` about a quarter of the rows (by chain and row) in older wire types.
   */
  function wireRows<T extends { chain_id: number }>(
    result: ListResult<T>,
    decode: boolean,
    legacy: (out: Record<string, unknown>, rec: T) => void,
  ): unknown[] {
    const rows = result.data ?? [];
    return rows.map((rec, i) => {
      const out: Record<string, unknown> = { ...rec, chain_id: String(rec.chain_id) };
      if (!decode) delete out.decoded;
      if (opts.legacyTypes && hash3(rec.chain_id, result.rowKeys![i]!, 0x1e6) % 4 === 0) legacy(out, rec);
      return out;
    });
  }

  function wireTransactions(result: ListResult<TransactionRecord>, decode: boolean): unknown[] {
    const rows = wireRows(result, decode, (out, rec) => {
      out.block_number = String(rec.block_number);
      out.value = Number(rec.value);
    });
    return opts.indexerRecords ? rows.map((r) => indexerTransaction(r as Record<string, unknown>)) : rows;
  }

  function wireEvents(result: ListResult<EventRecord>, decode: boolean): unknown[] {
    return wireRows(result, decode, (out, rec) => {
      out.block_number = String(rec.block_number);
    });
  }

  function listBody<T>(result: ListResult<T>, wire: unknown[]): unknown {
    const meta = opts.omitEmpty ? omitEmptyMeta(result.meta) : result.meta;
    if (result.aggregations) return { meta, aggregations: result.aggregations };
    return opts.omitEmpty ? { meta, data: wire } : { meta, data: wire, aggregations: null };
  }

  function nftParams(address: string, q: URLSearchParams) {
    const chainIds = parseChainIds(q);
    return {
      chainId: chainIds?.[0],
      types: (q.get('type') ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
      after: q.get('token_contract_address_hash'),
      afterType: q.get('token_type'),
      afterId: q.get('token_id'),
      pageSize: nftPageSize,
      query: Object.fromEntries(q),
      shape: {
        instanceLimit: opts.nftInstanceLimit,
        distinctAmount: opts.nftDistinctAmount,
        checksummed: opts.nftChecksummed,
        tokenKeys: opts.nftTokenKeys,
        typeOrder: opts.nftTypeOrder,
        echoPageParams: opts.nftEchoPageParams,
      },
    };
  }

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY) throw badRequest('request body too large');
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return {};
    try {
      return JSON.parse(text);
    } catch {
      throw badRequest('request body is not valid JSON');
    }
  }

  /** A list answer, or with the `ok*` rates a misbehaving 200 instead of it. */
  function listAnswer(rowsAsked: boolean, answer: (requestKey: number) => unknown): { status: number; body: unknown } {
    const requestKey = hash3(seed, ++listRequests, 0x4e9);
    const mis: OkMisbehaviour | null = okMisbehaviour(requestKey, rowsAsked, opts);
    return { status: 200, body: mis ? mis(() => answer(requestKey)) : answer(requestKey) };
  }

  async function handle(m: Matched, url: URL, req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const q = url.searchParams;
    switch (m.route) {
      case 'transactions': {
        const query = data.parseTransactionsQuery(q, paging);
        return listAnswer(!isAggregated(query), (key) => {
          const result = data.walletTransactions(m.params[0]!, query, listOpts(key));
          return listBody(result, wireTransactions(result, query.decode));
        });
      }
      case 'events': {
        if (opts.panicsAs500) {
          try {
            parseEventSignature(m.params[1]!);
          } catch {
            throw new SandboxHttpError(500, 'unparsable event signature', undefined, { emptyBody: true });
          }
        }
        const query = data.parseEventsQuery(q, paging);
        return listAnswer(!isAggregated(query), (key) => {
          const result = data.contractEvents(m.params[0]!, m.params[1]!, query, listOpts(key));
          return listBody(result, wireEvents(result, query.decode || opts.goValues === true));
        });
      }
      case 'resolve': {
        const input = m.params[0]!;
        if (opts.strictResolve && !isIndexerSearchInput(input)) throw badRequest(`invalid input '${input}'`);
        const r = data.resolve(input, parseChainIds(q));
        const d = r.data;
        if (opts.panicsAs500 && /^\d+$/.test(input) && d.blocks.length === 0) {
          throw new SandboxHttpError(500, `block ${input} is not indexed`, undefined, { emptyBody: true });
        }
        const wire: Record<string, unknown> = {
          ...d,
          transactions: d.transactions.map((t) => {
            const out = { ...t, chain_id: String(t.chain_id) };
            return opts.indexerRecords ? indexerTransaction(out) : out;
          }),
          events: d.events.map((e) => ({ ...e, chain_id: String(e.chain_id) })),
        };
        if (opts.strictResolve) {
          delete wire.address;
          if (d.type === 'unknown') delete wire.type;
        }
        if (opts.omitEmpty) for (const k of ['blocks', 'transactions', 'events'] as const) if (d[k].length === 0) delete wire[k];
        return { status: 200, body: { meta: opts.omitEmpty ? omitEmptyMeta(r.meta) : r.meta, data: wire } };
      }
      case 'decode': {
        const body = await readJson(req);
        return { status: 200, body: data.decode(m.params[0]!, body, parseChainIds(q)) };
      }
      case 'nft':
        return { status: 200, body: data.nftCollectionsPage(m.params[0]!, nftParams(m.params[0]!, q)) };
      case 'nft-list':
        return { status: 200, body: data.nftInstancesPage(m.params[0]!, nftParams(m.params[0]!, q)) };
    }
  }

  /** An error answer in the service's shape: {error} (contract) or {code, message, support_id} (insight). */
  function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    send(res, status, errorBody(status, message), headers);
  }

  function errorBody(status: number, message: string): unknown {
    return opts.insightErrorBodies ? { code: status, message, support_id: 'TODO' } : { error: message };
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : jsonText(body, opts.goValues === true);
    countStatus(status);
    const encoding = opts.compress === false ? undefined : cdnEncoding(res.req.headers['accept-encoding'], Buffer.byteLength(text));
    if (encoding === undefined) {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
      return;
    }
    cdnCompress(Buffer.from(text), encoding).then(
      (buf) => {
        res.writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'content-encoding': encoding,
          vary: 'accept-encoding',
          'content-length': buf.length,
          ...headers,
        });
        res.end(buf);
      },
      () => res.destroy(),
    );
  }

  function pickFault(route: SandboxRoute): FaultKind | null {
    const f = faults;
    if (!f) return null;
    if (f.routes && !f.routes.includes(route)) return null;
    const u = faultRng.float();
    let acc = 0;
    for (const kind of FAULT_ORDER) {
      acc += f.rates[kind] ?? 0;
      if (u < acc) return kind;
    }
    return null;
  }

  function takeToken(): boolean {
    if (!rateLimit) return true;
    const now = performance.now();
    const rps = rateLimit.requestsPerSecond;
    tokens = Math.min(Math.max(rps, 1), tokens + ((now - lastRefill) / 1000) * rps);
    lastRefill = now;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    return false;
  }

  function authorised(req: IncomingMessage): boolean {
    const a = opts.auth;
    if (!a || (a.clientId === undefined && a.secretKey === undefined)) return true;
    const clientId = req.headers['x-client-id'];
    const secret = req.headers['x-secret-key'];
    if (a.secretKey !== undefined && secret === a.secretKey) return true;
    if (a.clientId !== undefined && clientId === a.clientId) return true;
    return false;
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests++;
    let m: Matched | null;
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://sandbox.local');
      m = match(req.method ?? 'GET', url.pathname);
    } catch (err) {
      sendError(
        res,
        err instanceof SandboxHttpError ? err.status : 400,
        err instanceof SandboxHttpError ? err.shortMessage : 'bad request',
      );
      return;
    }
    if (url.pathname === REORG_ROUTE && req.method === 'POST') {
      try {
        send(res, 200, reorgRoute(data, url));
      } catch (err) {
        send(res, err instanceof SandboxHttpError ? err.status : 500, {
          error: err instanceof SandboxHttpError ? err.shortMessage : (err as Error).message,
        });
      }
      return;
    }
    const routeName = m?.route ?? 'unknown';
    stats.byRoute[routeName] = (stats.byRoute[routeName] ?? 0) + 1;

    if (latency) {
      const ms = latency.fixedMs + latencyRng.float() * latency.jitterMs;
      if (ms > 0) await sleep(ms);
    }
    if (!takeToken()) {
      sendError(res, 429, 'rate limit exceeded', { 'retry-after': String(rateLimit?.retryAfterSeconds ?? 1) });
      return;
    }
    if (!authorised(req)) {
      sendError(res, 401, 'unauthorized: missing or invalid x-client-id / x-secret-key');
      return;
    }
    if (!m) {
      sendError(res, 404, `not found: ${req.method} ${url.pathname}`);
      return;
    }
    const fault = pickFault(m.route);
    if (fault) countFault(fault);
    switch (fault) {
      case 'http500':
      case 'http502':
      case 'http503': {
        const status = Number(fault.slice(4));
        sendError(res, status, `injected fault: HTTP ${status}`);
        return;
      }
      case 'http429': {
        const ra = faults?.retryAfterSeconds;
        sendError(res, 429, 'rate limit exceeded (injected)', ra === undefined ? {} : { 'retry-after': String(ra) });
        return;
      }
      case 'reset':
        // Half of the resets come before any byte, half after the headers and a few body bytes.
        if (faultRng.next() & 1) {
          countStatus(200);
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': 1_000_000 });
          res.write('{"meta":');
          setImmediate(() => resetSocket(req.socket));
        } else {
          resetSocket(req.socket);
        }
        return;
      default:
        break;
    }

    let status: number;
    let body: unknown;
    try {
      ({ status, body } = await handle(m, url, req));
    } catch (err) {
      if (err instanceof SandboxHttpError && err.emptyBody) {
        status = err.status;
        body = undefined;
      } else if (err instanceof SandboxHttpError && err.sqlError && opts.sqlErrorsAs500) {
        status = 500;
        body = errorBody(500, 'An unexpected error occurred.');
      } else if (err instanceof SandboxHttpError) {
        status = err.status;
        body = errorBody(status, err.shortMessage);
      } else {
        status = 500;
        body = errorBody(500, `internal error: ${(err as Error)?.message ?? String(err)}`);
      }
    }
    if (fault === 'truncate' || fault === 'stall') {
      const buf = Buffer.from(body === undefined ? '' : jsonText(body, opts.goValues === true));
      countStatus(status);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': buf.length });
      const part = buf.subarray(0, Math.max(1, Math.floor(buf.length / 2)));
      res.write(part);
      if (fault === 'truncate') {
        // Content-Length promised the whole body: close after half of it.
        setImmediate(() => res.socket?.destroy());
      } else {
        const t = setTimeout(() => {
          timers.delete(t);
          res.socket?.destroy();
        }, faults?.stallMs ?? 60_000);
        timers.add(t);
      }
      return;
    }
    send(res, status, body);
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch((err) => {
      if (!res.headersSent) sendError(res, 500, `internal error: ${(err as Error)?.message ?? String(err)}`);
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
    url: origin + prefix,
    explorerUrl: origin + explorerPrefix,
    port,
    data,
    setFaults,
    setLatency: (l) => (latency = l ?? null),
    setRateLimit,
    stats: () => structuredClone(stats),
    resetStats: () => {
      stats = { requests: 0, byStatus: {}, byRoute: {}, faultsInjected: {} };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
      }),
  };
}
