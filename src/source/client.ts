/**
 * The read-interface client: all five operations of the read-interface contract over an
 * undici keep-alive pool, with a per-request deadline (headers and body), bounded retries
 * (429/5xx/network/truncated/timeout; Retry-After honoured, else exponential backoff with full
 * jitter), a cap on requests in flight and an optional shared requests-per-second budget.
 * Answers are asked for compressed, and read in whatever Content-Encoding they come (content-encoding.ts).
 *
 * Secrets travel only in the x-client-id / x-secret-key headers; headers are never logged and
 * URLs carry no secrets, so every URL in logs and errors is safe to show.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher } from 'undici';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { InsightExportError, InterruptedError } from '../errors.js';
import type {
  DecodeRequestBody,
  DecodeResponse,
  EventRecord,
  ListResponse,
  NftCollection,
  NftCollectionsPage,
  NftInstancesPage,
  NftListedInstance,
  ResolveResponse,
  TransactionRecord,
} from './records.js';
import {
  contractEventsPath,
  decodePath,
  isAggregateQuery,
  nftCollectionsPath,
  nftInstancesPath,
  resolvePath,
  validateDecodeBody,
  walletTransactionsPath,
  type ListQuery,
  type NftTokenType,
} from './query.js';
import {
  normaliseDecodeResponse,
  normaliseListResponse,
  normaliseNftCollectionsPage,
  normaliseNftInstancesPage,
  normaliseResolveResponse,
} from './response-records.js';
import {
  HttpStatusError,
  NotAPageError,
  NetworkError,
  PageNotWantedError,
  PaginationLoopError,
  RepeatedServerError,
  RequestTimeoutError,
  RequestValidationError,
  ResponseShapeError,
  RetriesExhaustedError,
  UnsupportedContentEncodingError,
} from './errors.js';
import { ACCEPT_ENCODING, contentCodings, decodeBody, DECODABLE_ENCODINGS, unsupportedCoding } from './content-encoding.js';
import { backoffDelay, isRetryable, parseRetryAfter, type Backoff } from './retry.js';
import type { RateLimiter } from './rate-limiter.js';
import type { AnswerPolicy, BadAnswer, BadAnswerCounts, BadAnswerReason } from './bad-answers.js';

export interface ClientOptions {
  /** Includes the path prefix: 'http://127.0.0.1:8787/insights/v1' or 'https://insight.thirdweb.com/v1'. */
  baseUrl: string;
  /** Explorer area including its prefix; default: origin of baseUrl + '/api/v2'. */
  explorerBaseUrl?: string;
  /** Sent as x-client-id. */
  clientId?: string;
  /** Sent as x-secret-key. */
  secretKey?: string;
  /** Per request, headers and body together; default 30_000. */
  timeoutMs?: number;
  /** Attempts per request including the first; default 6 (1 = no retry). */
  maxAttempts?: number;
  /** Exponential backoff with full jitter; default 250 / 20_000 ms. */
  backoff?: Backoff;
  /** Keep-alive connections per origin; default 16. */
  connections?: number;
  /** Cap on concurrent requests shared by all calls of this client; default: `connections`. */
  maxInFlight?: number;
  /** Requests-per-second budget shared by the whole run. */
  rateLimiter?: RateLimiter;
  /** Each retry is logged at warn with url, status, attempt, delay (never headers). */
  logger?: Logger;
  /** For tests: the jitter source. */
  random?: () => number;
}

export interface ClientStats {
  /** HTTP attempts sent (first tries and retries). */
  requests: number;
  /** Attempts that were retries. */
  retries: number;
  /** 429 answers received. */
  status429: number;
  /** Calls that ended in an error (after any retries). */
  failures: number;
  /** Response body bytes received. */
  bytesReceived: number;
  /**
   * By chain id, the attempts and retries of requests that named that chain (chain_id parameters):
   * a request for several chains counts for each of them, so these add up to more than the totals
   * when requests share chains; a request that names no chain counts for none.
   */
  byChain: Map<number, ChainRequestFigures>;
  /** Answers not taken as a proof and asked again (src/source/bad-answers.ts), by reason. */
  badAnswers: BadAnswerCounts;
}

export interface ChainRequestFigures {
  requests: number;
  retries: number;
}

export interface AuthFromEnv {
  clientId?: string;
  secretKey?: string;
}

/** Reads INSIGHT_CLIENT_ID / INSIGHT_SECRET_KEY (empty values count as unset). */
export function authFromEnv(env: Record<string, string | undefined> = process.env): AuthFromEnv {
  const auth: AuthFromEnv = {};
  const clientId = env.INSIGHT_CLIENT_ID?.trim();
  const secretKey = env.INSIGHT_SECRET_KEY?.trim();
  if (clientId) auth.clientId = clientId;
  if (secretKey) auth.secretKey = secretKey;
  return auth;
}

interface Endpoint {
  origin: string;
  /** Path prefix without a trailing slash: '/insights/v1', '' ... */
  prefix: string;
}

function parseBaseUrl(parameter: string, value: string): Endpoint {
  let url: URL;
  try {
    url = new URL(value);
  } catch (err) {
    throw new RequestValidationError(parameter, `not a URL: ${JSON.stringify(value)}`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RequestValidationError(parameter, `expected an http(s) URL, got ${url.protocol}`);
  }
  if (url.username || url.password || url.search || url.hash) {
    // Anything there would end up in logs and error messages.
    throw new RequestValidationError(parameter, 'must not contain credentials, a query string or a fragment', {
      hint: 'Put keys in INSIGHT_CLIENT_ID / INSIGHT_SECRET_KEY.',
    });
  }
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

const USER_AGENT = 'insight-export/0.1';
/** Attempts in a row answered with an empty 500 after which a query the service is known to crash on ends. */
const REPEATED_500_ATTEMPTS = 3;
/** Error bodies are read only this far, for their message. */
const MAX_ERROR_BODY = 64 * 1024;

/** A 2xx answer's body as it came over the wire. */
interface ReceivedBody {
  body: Buffer;
  contentEncoding: string | string[] | undefined;
}

/**
 * A list page whose answer waits as received (its bytes, compressed if the service compressed
 * them) until its reader wants it, and is decoded and parsed only then: parsed pages waiting their
 * turn take 2x their JSON text and ~10x its brotli bytes, and were the largest part of the heap. A
 * body that does not decode is retried when its page is wanted.
 */
export interface HeldBody {
  /** The body arrived whole (before it is decoded): the request no longer holds the wire. */
  received(): void;
  /** Resolves when the page is wanted; rejects (with PageNotWantedError) when it never will be. */
  wanted: Promise<void>;
}

interface RequestOptions {
  body?: string;
  /** Throws (a retryable error) when a 2xx body is not what was asked for. */
  check?: (json: unknown, url: string) => void;
  /** See requestJson. */
  likelyCause?: string;
  /** With likelyCause: the same 500 message on every attempt also counts (not only an empty body). */
  sameMessageCounts?: boolean;
  held?: HeldBody | undefined;
  /** The chains the request names, for ClientStats.byChain. */
  chainIds?: number[] | undefined;
}

/** A known failure to ask for: a query of a kind the service fails on for good (see requestJson). */
export interface KnownFailure {
  likelyCause: string;
  /** The same 500 message on each attempt means it too, not only an empty body. */
  sameMessageCounts?: boolean;
}

type NftRouteOptions = { types?: NftTokenType[]; chainIds?: number[] };
type NftPageOptions = NftRouteOptions & { pageParams?: Record<string, string | number> };

/** An explorer route paged by next_page_params: its request name, path and answer check. */
interface ExplorerRoute<Page> {
  op: string;
  path(address: string, opts: NftPageOptions): string;
  normalise(json: unknown, url: string): Page;
}

const NFT_COLLECTIONS_ROUTE: ExplorerRoute<NftCollectionsPage> = {
  op: 'nftCollections',
  path: nftCollectionsPath,
  normalise: normaliseNftCollectionsPage,
};
const NFT_INSTANCES_ROUTE: ExplorerRoute<NftInstancesPage> = {
  op: 'nftInstances',
  path: nftInstancesPath,
  normalise: normaliseNftInstancesPage,
};

/** One HTTP request as sent: where, what and with which headers. */
interface Exchange {
  origin: string;
  path: string;
  /** origin + path, for messages. */
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | undefined;
}

interface JsonResult {
  json: unknown;
  url: string;
}

export class InsightClient {
  readonly stats: ClientStats = {
    requests: 0,
    retries: 0,
    status429: 0,
    failures: 0,
    bytesReceived: 0,
    byChain: new Map(),
    badAnswers: {},
  };
  /** Cap on concurrent requests of this client (callers size their pipelining by it). */
  readonly maxInFlight: number;
  private readonly api: Endpoint;
  private readonly explorer: Endpoint;
  private readonly agent: Agent;
  private readonly limit: LimitFunction;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: Backoff;
  private readonly rateLimiter: RateLimiter | undefined;
  private readonly logger: Logger;
  private readonly random: () => number;
  private readonly apiHeaders: Record<string, string>;
  private readonly explorerHeaders: Record<string, string>;
  private stopSignal: AbortSignal | undefined;
  private readonly requestListeners = new Set<() => void>();

  constructor(opts: ClientOptions) {
    this.api = parseBaseUrl('baseUrl', opts.baseUrl);
    this.explorer = opts.explorerBaseUrl
      ? parseBaseUrl('explorerBaseUrl', opts.explorerBaseUrl)
      : { origin: this.api.origin, prefix: '/api/v2' };
    this.timeoutMs = positiveInt('timeoutMs', opts.timeoutMs ?? 30_000);
    this.maxAttempts = positiveInt('maxAttempts', opts.maxAttempts ?? 6);
    this.backoff = opts.backoff ?? { baseMs: 250, maxMs: 20_000 };
    if (!(this.backoff.baseMs >= 0) || !(this.backoff.maxMs >= this.backoff.baseMs)) {
      throw new RequestValidationError('backoff', 'expected 0 <= baseMs <= maxMs');
    }
    this.rateLimiter = opts.rateLimiter;
    this.logger = opts.logger ?? silentLogger;
    this.random = opts.random ?? Math.random;
    const connections = positiveInt('connections', opts.connections ?? 16);
    // Requests beyond the pool would wait inside undici with their deadline already running.
    this.maxInFlight = positiveInt('maxInFlight', opts.maxInFlight ?? connections);
    this.limit = pLimit(this.maxInFlight);
    this.agent = new Agent({
      connections,
      // Our own deadline covers headers and body together; these are only a backstop.
      headersTimeout: this.timeoutMs + 1_000,
      bodyTimeout: this.timeoutMs + 1_000,
      connectTimeout: Math.min(this.timeoutMs, 10_000),
    });

    const base: Record<string, string> = { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING, 'user-agent': USER_AGENT };
    const auth: Record<string, string> = {};
    if (opts.clientId) auth['x-client-id'] = opts.clientId;
    if (opts.secretKey) auth['x-secret-key'] = opts.secretKey;
    this.apiHeaders = { ...base, ...auth };
    // Keys go to the explorer area only when it is served by the same origin as the API.
    this.explorerHeaders = this.explorer.origin === this.api.origin ? { ...base, ...auth } : { ...base };
  }

  // -------------------------------------------------------------------------------------------
  // Operations

  /** Operation 1: transactions from or to a wallet (address or name). */
  async walletTransactions(wallet: string, q: ListQuery, held?: HeldBody, known?: KnownFailure): Promise<ListResponse<TransactionRecord>> {
    return this.call(async () => {
      const path = walletTransactionsPath(wallet, q);
      const { json, url } = await this.requestJson('walletTransactions', this.api, path, 'GET', {
        check: listPageCheck(q),
        held,
        ...known,
        chainIds: q.chainIds,
      });
      return normaliseListResponse(json, url, 'transactions', isAggregateQuery(q), metaFallback(q));
    });
  }

  /** Operation 2: a contract's events matching a human-readable event signature. */
  async contractEvents(contract: string, signature: string, q: ListQuery, held?: HeldBody): Promise<ListResponse<EventRecord>> {
    return this.call(async () => {
      const path = contractEventsPath(contract, signature, q);
      const cause = `the service cannot parse the event signature "${signature}" (write every type in canonical form: uint256, not uint)`;
      const { json, url } = await this.requestJson('contractEvents', this.api, path, 'GET', {
        check: listPageCheck(q),
        likelyCause: cause,
        held,
        chainIds: q.chainIds,
      });
      return normaliseListResponse(json, url, 'events', isAggregateQuery(q), metaFallback(q));
    });
  }

  /** Operation 3. */
  async resolve(input: string, opts: { chainIds?: number[] } = {}): Promise<ResolveResponse> {
    return this.call(async () => {
      const path = resolvePath(input, opts);
      const cause = /^\d+$/.test(input)
        ? `block ${input} is probably not indexed by the service (beyond its head, or before its first block), and it fails instead of answering nothing`
        : undefined;
      const { json, url } = await this.requestJson('resolve', this.api, path, 'GET', { likelyCause: cause, chainIds: opts.chainIds });
      return normaliseResolveResponse(json, url, { chainIds: opts.chainIds });
    });
  }

  /** Operation 4 (POST). A 404 means the service knows no ABI for the contract. */
  async decode(contract: string, body: DecodeRequestBody, opts: { chainIds?: number[] } = {}): Promise<DecodeResponse> {
    return this.call(async () => {
      const path = decodePath(contract, opts);
      const payload = JSON.stringify(validateDecodeBody(body));
      const { json, url } = await this.requestJson('decode', this.api, path, 'POST', { body: payload, chainIds: opts.chainIds });
      return normaliseDecodeResponse(json, url);
    });
  }

  /** Operation 5, one page. */
  async nftCollectionsPage(address: string, opts: NftPageOptions = {}): Promise<NftCollectionsPage> {
    return this.explorerPage(NFT_COLLECTIONS_ROUTE, address, opts);
  }

  /** Operation 5, every page: follows next_page_params until null. */
  async *nftCollections(address: string, opts: NftRouteOptions = {}): AsyncGenerator<NftCollection> {
    yield* this.explorerPages(NFT_COLLECTIONS_ROUTE, address, opts);
  }

  /**
   * One page of Blockscout's ungrouped addresses/<hash>/nft route (not in the contract): every
   * instance, with its collection's token. An explorer that does not serve it answers 404.
   */
  async nftInstancesPage(address: string, opts: NftPageOptions = {}): Promise<NftInstancesPage> {
    return this.explorerPage(NFT_INSTANCES_ROUTE, address, opts);
  }

  /** Every page of the ungrouped route: follows next_page_params until null. */
  async *nftInstances(address: string, opts: NftRouteOptions = {}): AsyncGenerator<NftListedInstance> {
    yield* this.explorerPages(NFT_INSTANCES_ROUTE, address, opts);
  }

  private async explorerPage<Page>(route: ExplorerRoute<Page>, address: string, opts: NftPageOptions): Promise<Page> {
    return this.call(async () => {
      const { json, url } = await this.requestJson(route.op, this.explorer, route.path(address, opts), 'GET', { chainIds: opts.chainIds });
      return route.normalise(json, url);
    });
  }

  private explorerPages<Item>(
    route: ExplorerRoute<{ items: Item[]; next_page_params: Record<string, string | number> | null }>,
    address: string,
    opts: NftRouteOptions,
  ): AsyncGenerator<Item> {
    return this.followPages(
      (pageParams) => this.explorerPage(route, address, { ...opts, pageParams }),
      (pageParams) => route.path(address, { ...opts, pageParams }),
    );
  }

  private async *followPages<T>(
    page: (
      pageParams: Record<string, string | number> | undefined,
    ) => Promise<{ items: T[]; next_page_params: Record<string, string | number> | null }>,
    pathOf: (pageParams: Record<string, string | number>) => string,
  ): AsyncGenerator<T> {
    const seen = new Set<string>();
    let pageParams: Record<string, string | number> | undefined;
    for (;;) {
      const answer = await page(pageParams);
      for (const item of answer.items) yield item;
      const next = answer.next_page_params;
      if (next === null) return;
      const key = canonicalParams(next);
      if (seen.has(key) || (pageParams !== undefined && key === canonicalParams(pageParams))) {
        this.stats.failures++;
        throw new PaginationLoopError(this.safeUrl(this.explorer, pathOf(next)), next);
      }
      seen.add(key);
      pageParams = next;
    }
  }

  /** Releases the keep-alive pool (waits for requests in flight). */
  async close(): Promise<void> {
    await this.agent.close();
  }

  // -------------------------------------------------------------------------------------------
  // Transport

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof PageNotWantedError)) this.stats.failures++;
      throw err;
    }
  }

  private safeUrl(endpoint: Endpoint, path: string): string {
    return `${endpoint.origin}${endpoint.prefix}${path}`;
  }

  /**
   * One logical request: attempts until success, a non-retryable error, or maxAttempts. With
   * `likelyCause` (a query of a kind the service is known to crash on for good), a 500 with an
   * empty body (the indexer's recovered panic) on REPEATED_500_ATTEMPTS attempts in a row ends it
   * early with a RepeatedServerError naming that cause.
   */
  private async requestJson(
    op: string,
    endpoint: Endpoint,
    path: string,
    method: 'GET' | 'POST',
    { body, check, likelyCause, sameMessageCounts, held, chainIds }: RequestOptions = {},
  ): Promise<JsonResult> {
    const fullPath = `${endpoint.prefix}${path}`;
    const url = `${endpoint.origin}${fullPath}`;
    const headers = endpoint === this.api ? this.apiHeaders : this.explorerHeaders;
    const reqHeaders = body === undefined ? headers : { ...headers, 'content-type': 'application/json' };

    let panics = 0;
    let panicMessage: string | undefined;
    for (let attempt = 1; ; attempt++) {
      let error: Error;
      try {
        const json = await this.attempt(
          { origin: endpoint.origin, path: fullPath, url, method, headers: reqHeaders, body },
          held,
          chainIds,
        );
        check?.(json, url);
        return { json, url };
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        error = err;
      }
      if (!isRetryable(error)) throw error;
      const panic = (e: Error): e is HttpStatusError =>
        likelyCause !== undefined &&
        e instanceof HttpStatusError &&
        e.status === 500 &&
        (e.serverMessage === undefined || (sameMessageCounts === true && (panics === 0 || e.serverMessage === panicMessage)));
      if (panic(error)) {
        panicMessage = error.serverMessage;
        if (++panics >= REPEATED_500_ATTEMPTS) throw new RepeatedServerError(url, attempt, error, likelyCause!);
      } else {
        panics = 0;
      }
      if (attempt >= this.maxAttempts) throw new RetriesExhaustedError(url, attempt, error);

      const retryAfterMs = error instanceof HttpStatusError ? error.retryAfterMs : undefined;
      const delayMs = retryAfterMs ?? backoffDelay(attempt, this.backoff, this.random);
      if (retryAfterMs !== undefined && error instanceof HttpStatusError && error.status === 429) {
        this.rateLimiter?.pauseFor?.(retryAfterMs);
      }
      this.logger.warn(
        {
          op,
          url,
          status: error instanceof HttpStatusError ? error.status : undefined,
          code: error instanceof NetworkError ? error.code : undefined,
          error: error instanceof InsightExportError ? error.shortMessage : error.message,
          attempt,
          maxAttempts: this.maxAttempts,
          delayMs,
          retryAfter: retryAfterMs !== undefined,
        },
        'read interface request failed; retrying',
      );
      this.stats.retries++;
      for (const id of chainIds ?? []) this.chainFigures(id).retries++;
      // A stop cuts the wait short; the next attempt then ends with InterruptedError.
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: this.stopSignal }).catch(() => undefined);
    }
  }

  /** Counts an answer that arrived but proves nothing (src/source/bad-answers.ts), by reason. */
  noteBadAnswer(reason: BadAnswerReason): void {
    this.stats.badAnswers[reason] = (this.stats.badAnswers[reason] ?? 0) + 1;
  }

  /**
   * After an answer that proves nothing: when `attempt` (the attempts made so far) leaves one,
   * logged and waited for with the retries' backoff. false: the attempts are used up (the caller
   * fails with BadAnswerError).
   */
  async retryBadAnswer(attempt: number, bad: BadAnswer): Promise<boolean> {
    if (attempt >= this.maxAttempts) return false;
    const delayMs = backoffDelay(attempt, this.backoff, this.random);
    this.logger.warn(
      { reason: bad.reason, answer: bad.what, attempt, maxAttempts: this.maxAttempts, delayMs },
      'the service answered something that proves nothing; asking again',
    );
    this.stats.retries++;
    for (const id of bad.chainIds ?? []) this.chainFigures(id).retries++;
    if (delayMs > 0) await sleep(delayMs, undefined, { signal: this.stopSignal }).catch(() => undefined);
    this.throwIfStopped();
    return true;
  }

  /** The policy for answers that prove nothing: counted here, asked again with the retries' backoff. */
  readonly answers: AnswerPolicy = {
    note: (reason) => this.noteBadAnswer(reason),
    retry: (attempt, bad) => this.retryBadAnswer(attempt, bad),
  };

  private chainFigures(chainId: number): ChainRequestFigures {
    let f = this.stats.byChain.get(chainId);
    if (!f) this.stats.byChain.set(chainId, (f = { requests: 0, retries: 0 }));
    return f;
  }

  /** Calls `listener` as each HTTP attempt is sent (progress); returns the function that stops it. */
  onRequest(listener: () => void): () => void {
    this.requestListeners.add(listener);
    return () => this.requestListeners.delete(listener);
  }

  /**
   * Once `signal` is aborted (SIGINT/SIGTERM), no further request is sent: each ends with an
   * InterruptedError, so every phase of a run (head search, edge lookups, paging) stops at its
   * next request instead of finishing its searches first.
   */
  stopOn(signal: AbortSignal): void {
    this.stopSignal = signal;
  }

  private throwIfStopped(): void {
    if (this.stopSignal?.aborted) throw new InterruptedError(String(this.stopSignal.reason ?? 'a signal'));
  }

  private attempt(request: Exchange, held: HeldBody | undefined, chainIds: number[] | undefined): Promise<unknown> {
    const { url } = request;
    const run = async (): Promise<ReceivedBody> => {
      this.throwIfStopped();
      if (this.rateLimiter) await this.rateLimiter.acquire();
      this.throwIfStopped();
      for (const id of chainIds ?? []) this.chainFigures(id).requests++;
      return this.sendOnce(request);
    };
    // The slot is the exchange only: decoding and parsing wait for the main thread, and a slot
    // held meanwhile would be a request the service could be answering.
    const exchange = this.limit(run);
    if (!held) return exchange.then((received) => this.parseBody(url, received));
    return exchange.then(async (received) => {
      held.received();
      await held.wanted;
      return this.parseBody(url, received);
    });
  }

  /** One HTTP exchange under one deadline: the status checked and the body received whole. */
  private async sendOnce({ origin, path, url, method, headers, body }: Exchange): Promise<ReceivedBody> {
    this.stats.requests++;
    for (const listener of this.requestListeners) listener();
    const controller = new AbortController();
    let phase: 'headers' | 'body' = 'headers';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new RequestTimeoutError(url, this.timeoutMs, phase));
    }, this.timeoutMs);
    // A stop does not wait for answers in flight: a slow service would hold the run past its grace period.
    const stop = this.stopSignal;
    const onStop = () => controller.abort();
    stop?.addEventListener('abort', onStop, { once: true });

    let res: Dispatcher.ResponseData;
    try {
      try {
        res = await this.agent.request({ origin, path, method, headers, body, signal: controller.signal });
      } catch (err) {
        this.throwIfStopped();
        if (timedOut) throw new RequestTimeoutError(url, this.timeoutMs, 'headers');
        throw toNetworkError(url, err, this.timeoutMs);
      }
      phase = 'body';

      if (res.statusCode < 200 || res.statusCode >= 300) {
        if (res.statusCode === 429) this.stats.status429++;
        const text = await this.readErrorBody(res);
        const { message, supportId } = errorMessageOf(text, res.headers['content-type']);
        throw new HttpStatusError(res.statusCode, url, message, {
          supportId,
          retryAfterMs: parseRetryAfter(res.headers['retry-after']),
        });
      }

      const chunks: Buffer[] = [];
      let received = 0;
      try {
        for await (const chunk of res.body) {
          chunks.push(chunk as Buffer);
          received += (chunk as Buffer).length;
        }
      } catch (err) {
        this.stats.bytesReceived += received;
        this.throwIfStopped();
        if (timedOut) throw new RequestTimeoutError(url, this.timeoutMs, 'body');
        const length = res.headers['content-length'];
        throw new ResponseShapeError(
          'truncated',
          url,
          '$',
          `body cut short after ${received} bytes${typeof length === 'string' ? ` of ${length}` : ''} (${errCode(err) ?? 'connection closed'})`,
          err,
        );
      }
      this.stats.bytesReceived += received;
      return { body: Buffer.concat(chunks, received), contentEncoding: res.headers['content-encoding'] };
    } finally {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    }
  }

  /** A received body as JSON. */
  private async parseBody(url: string, received: ReceivedBody): Promise<unknown> {
    const text = (await this.decodedBody(url, received)).toString('utf8');
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      const trimmed = text.trimEnd();
      const last = trimmed.charCodeAt(trimmed.length - 1);
      const truncated = trimmed.length === 0 || (last !== '}'.charCodeAt(0) && last !== ']'.charCodeAt(0));
      throw new ResponseShapeError(
        truncated ? 'truncated' : 'invalid_json',
        url,
        '$',
        truncated ? `body is cut short or empty (${received.body.length} bytes)` : `body is not JSON (${(err as Error).message})`,
        err,
      );
    }
  }

  /**
   * The body without its Content-Encoding, asked for or not. A coding this runtime cannot decode
   * will not change on a retry; a body that does not decode was cut or mangled on the way (retried).
   */
  private async decodedBody(url: string, { body, contentEncoding: header }: ReceivedBody): Promise<Buffer> {
    const codings = contentCodings(header);
    if (codings.length === 0) return body;
    const unsupported = unsupportedCoding(codings);
    if (unsupported !== undefined) {
      throw new UnsupportedContentEncodingError(url, unsupported, String(header), DECODABLE_ENCODINGS);
    }
    try {
      return await decodeBody(body, codings);
    } catch (err) {
      throw new ResponseShapeError(
        'truncated',
        url,
        '$',
        `${codings.join(', ')} body of ${body.length} bytes does not decode (${errCode(err) ?? (err as Error).message})`,
        err,
      );
    }
  }

  private async readErrorBody(res: Dispatcher.ResponseData): Promise<string> {
    const chunks: Buffer[] = [];
    let received = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        this.stats.bytesReceived += buf.length;
        if (received < MAX_ERROR_BODY) chunks.push(buf);
        received += buf.length;
      }
    } catch {
      // The status code is what matters; a broken error body only loses the message.
    }
    let body: Buffer = Buffer.concat(chunks);
    const codings = contentCodings(res.headers['content-encoding']);
    if (codings.length > 0) {
      body = unsupportedCoding(codings) === undefined ? await decodeBody(body, codings).catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
    }
    return body.toString('utf8').slice(0, MAX_ERROR_BODY);
  }
}

function positiveInt(parameter: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RequestValidationError(parameter, `expected a positive integer, got ${value}`);
  return value;
}

function metaFallback(q: ListQuery): { chainIds: number[]; page: number; limit: number } {
  return { chainIds: q.chainIds, page: q.page ?? 0, limit: q.limit ?? 20 };
}

function canonicalParams(params: Record<string, string | number>): string {
  return JSON.stringify(
    Object.keys(params)
      .sort()
      .map((k) => [k, String(params[k])]),
  );
}

function errCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function toNetworkError(url: string, err: unknown, timeoutMs: number): Error {
  if (err instanceof InsightExportError) return err;
  const code = errCode(err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new RequestTimeoutError(url, timeoutMs, code === 'UND_ERR_HEADERS_TIMEOUT' ? 'headers' : 'body');
  }
  return new NetworkError(url, code, err);
}

/** The message of an error body: `{"error": "..."}`, `{"error": {message}}` or the older `{code, message, support_id}`. */
function errorMessageOfJson(o: Record<string, unknown>): { message: string | undefined; supportId: string | undefined } | undefined {
  const supportId = typeof o.support_id === 'string' ? o.support_id : undefined;
  if (typeof o.error === 'string') return { message: o.error, supportId };
  if (o.error && typeof o.error === 'object' && typeof (o.error as Record<string, unknown>).message === 'string') {
    return { message: (o.error as Record<string, string>).message, supportId };
  }
  if (typeof o.message === 'string') {
    return { message: o.code !== undefined ? `${o.message} (code ${String(o.code)})` : o.message, supportId };
  }
  return undefined;
}

/**
 * An error body's message: the service's own (JSON), a short plain text as it is, else a summary
 * (content type, title or first line, length): a proxy's HTML error page is not a message.
 */
function errorMessageOf(text: string, contentType?: string | string[]): { message: string | undefined; supportId: string | undefined } {
  const trimmed = text.trim();
  if (trimmed === '') return { message: undefined, supportId: undefined };
  try {
    const json = JSON.parse(trimmed) as unknown;
    if (json && typeof json === 'object') {
      const found = errorMessageOfJson(json as Record<string, unknown>);
      if (found) return found;
    }
  } catch {
    // not JSON: fall through to the text
  }
  return { message: summariseBody(trimmed, contentType), supportId: undefined };
}

/** Longest error text used as it is; longer ones, and markup, are summarised. */
const SHORT_ERROR_TEXT = 120;

/** A non-JSON error body in a few words: `text/html body of 1234 bytes: "503 Service Temporarily Unavailable"`. */
export function summariseBody(text: string, contentType?: string | string[]): string {
  const markup = /^<(!doctype|html|\?xml|[a-z])/i.test(text);
  if (!markup && !text.includes('\n') && text.length <= SHORT_ERROR_TEXT) return text;
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]?.trim() || (markup ? 'markup' : 'text');
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1] ?? /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1];
  const firstLine = (markup ? text.replace(/<[^>]*>/g, ' ') : text)
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .find((l) => l !== '');
  const gist = (title?.replace(/\s+/g, ' ').trim() || firstLine || '').slice(0, 80);
  return `${type} body of ${Buffer.byteLength(text)} bytes${gist ? `: "${gist}"` : ''}`;
}

/**
 * A list answer must be a page: not an error body (whatever its status), and with `data` an
 * array when records were asked for (the indexer always sends one, `[]` when empty).
 */
function listPageCheck(q: ListQuery): (json: unknown, url: string) => void {
  const aggregated = isAggregateQuery(q);
  return (json, url) => {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return; // the normaliser names the shape
    const o = json as Record<string, unknown>;
    const rows = aggregated ? (o.aggregations ?? o.data) : o.data;
    if (Array.isArray(rows)) return;
    if (o.error !== undefined && o.error !== null)
      throw new NotAPageError(url, 'an error body', errorMessageOfJson(o)?.message ?? JSON.stringify(o.error).slice(0, 300));
    if (o.meta === undefined && typeof o.message === 'string')
      throw new NotAPageError(url, 'an error body', errorMessageOfJson(o)?.message);
    if (!aggregated) throw new NotAPageError(url, `no rows (data is ${o.data === null ? 'null' : 'missing'})`, undefined);
  };
}
