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
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { InsightExportError } from '../errors.js';
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
  MAX_CHAIN_IDS,
  resolvePath,
  validateDecodeBody,
  walletTransactionsPath,
  type ListQuery,
} from './query.js';
import { normaliseDecodeResponse, normaliseListResponse, normaliseResolveResponse } from './response-records.js';
import {
  HttpStatusError,
  NetworkError,
  PageNotWantedError,
  PaginationLoopError,
  RepeatedServerError,
  RequestValidationError,
  RetriesExhaustedError,
} from './errors.js';
import { ACCEPT_ENCODING } from './content-encoding.js';
import { backoffDelay, isRetryable, type Backoff } from './retry.js';
import type { RateLimiter } from './rate-limiter.js';
import type { AnswerPolicy, BadAnswer, BadAnswerReason } from './bad-answers.js';
import { newClientStats, type ChainRequestFigures, type ClientStats } from './client-stats.js';
import { listPageCheck } from './error-body.js';
import { Wire, type Exchange, type ReceivedBody } from './wire.js';

import { parseBaseUrl, positiveInt, type ClientOptions, type Endpoint } from './client-options.js';
import {
  followPages,
  NFT_COLLECTIONS_ROUTE,
  NFT_INSTANCES_ROUTE,
  type ExplorerRoute,
  type NftPageOptions,
  type NftRouteOptions,
} from './explorer-routes.js';

import { ChainsPerRequest, inChainBatches, resolveInChainBatches } from './chain-count.js';
export type { ChainRequestFigures, ClientStats } from './client-stats.js';
export { authFromEnv, type AuthFromEnv, type ClientOptions } from './client-options.js';
export { summariseBody } from './error-body.js';

const USER_AGENT = 'insight-export/0.1';
/** Attempts in a row answered with an empty 500 after which a query the service is known to crash on ends. */
const REPEATED_500_ATTEMPTS = 3;

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

interface JsonResult {
  json: unknown;
  url: string;
}

export class InsightClient {
  readonly stats: ClientStats = newClientStats();
  /** Cap on concurrent requests of this client (callers size their pipelining by it). */
  readonly maxInFlight: number;
  private readonly api: Endpoint;
  private readonly explorer: Endpoint;
  private readonly wire: Wire;
  private readonly limit: LimitFunction;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: Backoff;
  private readonly rateLimiter: RateLimiter | undefined;
  private readonly chainsPerRequest: ChainsPerRequest;
  private readonly logger: Logger;
  private readonly random: () => number;
  private readonly apiHeaders: Record<string, string>;
  private readonly explorerHeaders: Record<string, string>;

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
    this.chainsPerRequest = new ChainsPerRequest(positiveInt('chainIdsPerRequest', opts.chainIdsPerRequest ?? MAX_CHAIN_IDS), this.logger);
    this.random = opts.random ?? Math.random;
    const connections = positiveInt('connections', opts.connections ?? 16);
    // Requests beyond the pool would wait inside undici with their deadline already running.
    this.maxInFlight = positiveInt('maxInFlight', opts.maxInFlight ?? connections);
    this.limit = pLimit(this.maxInFlight);
    this.wire = new Wire(this.timeoutMs, connections, this.stats);

    const base: Record<string, string> = { accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING, 'user-agent': USER_AGENT };
    const auth: Record<string, string> = {};
    if (opts.clientId) auth['x-client-id'] = opts.clientId;
    if (opts.secretKey) auth['x-secret-key'] = opts.secretKey;
    this.apiHeaders = { ...base, ...auth };
    // Keys go to the explorer area only when it is served by the same origin as the API.
    this.explorerHeaders = this.explorer.origin === this.api.origin ? { ...base, ...auth } : { ...base };
  }

  /** The most chain ids a request of this run names now: source.chain_ids_per_request, halved each time the service refused a request for its number of chains. */
  get chainIdsPerRequest(): number {
    return this.chainsPerRequest.current;
  }

  // -------------------------------------------------------------------------------------------
  // Operations

  /** Operation 1: transactions from or to a wallet (address or name). */
  async walletTransactions(wallet: string, q: ListQuery, held?: HeldBody, known?: KnownFailure): Promise<ListResponse<TransactionRecord>> {
    return this.call(() => inChainBatches(q, this.chainsPerRequest, (part) => this.walletTransactionsOnce(wallet, part, held, known)));
  }

  private async walletTransactionsOnce(
    wallet: string,
    q: ListQuery,
    held?: HeldBody,
    known?: KnownFailure,
  ): Promise<ListResponse<TransactionRecord>> {
    const path = walletTransactionsPath(wallet, q);
    const { json, url } = await this.requestJson('walletTransactions', this.api, path, 'GET', {
      check: listPageCheck(q),
      held,
      ...known,
      chainIds: q.chainIds,
    });
    return normaliseListResponse(json, url, 'transactions', isAggregateQuery(q), metaFallback(q));
  }

  /** Operation 2: a contract's events matching a human-readable event signature. */
  async contractEvents(contract: string, signature: string, q: ListQuery, held?: HeldBody): Promise<ListResponse<EventRecord>> {
    return this.call(() => inChainBatches(q, this.chainsPerRequest, (part) => this.contractEventsOnce(contract, signature, part, held)));
  }

  private async contractEventsOnce(contract: string, signature: string, q: ListQuery, held?: HeldBody): Promise<ListResponse<EventRecord>> {
    const path = contractEventsPath(contract, signature, q);
    const cause = `the service cannot parse the event signature "${signature}" (write every type in canonical form: uint256, not uint)`;
    const { json, url } = await this.requestJson('contractEvents', this.api, path, 'GET', {
      check: listPageCheck(q),
      likelyCause: cause,
      held,
      chainIds: q.chainIds,
    });
    return normaliseListResponse(json, url, 'events', isAggregateQuery(q), metaFallback(q));
  }

  /** Operation 3. */
  async resolve(input: string, opts: { chainIds?: number[] } = {}): Promise<ResolveResponse> {
    const chainIds = opts.chainIds;
    if (!chainIds) return this.call(() => this.resolveOnce(input, undefined));
    return this.call(() => resolveInChainBatches(chainIds, this.chainsPerRequest, (part) => this.resolveOnce(input, part)));
  }

  private async resolveOnce(input: string, chainIds: number[] | undefined): Promise<ResolveResponse> {
    const path = resolvePath(input, { chainIds });
    const cause = /^\d+$/.test(input)
      ? `block ${input} is probably not indexed by the service (beyond its head, or before its first block), and it fails instead of answering nothing`
      : undefined;
    const { json, url } = await this.requestJson('resolve', this.api, path, 'GET', { likelyCause: cause, chainIds });
    return normaliseResolveResponse(json, url, { chainIds });
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
    return followPages(
      (pageParams) => this.explorerPage(route, address, { ...opts, pageParams }),
      (next) => {
        this.stats.failures++;
        return new PaginationLoopError(this.safeUrl(this.explorer, route.path(address, { ...opts, pageParams: next })), next);
      },
    );
  }

  /** Releases the keep-alive pool (waits for requests in flight). */
  async close(): Promise<void> {
    await this.wire.close();
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
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: this.wire.stop }).catch(() => undefined);
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
    if (delayMs > 0) await sleep(delayMs, undefined, { signal: this.wire.stop }).catch(() => undefined);
    this.wire.throwIfStopped();
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
    return this.wire.onRequest(listener);
  }

  /**
   * Once `signal` is aborted (SIGINT/SIGTERM), no further request is sent: each ends with an
   * InterruptedError, so every phase of a run (head search, edge lookups, paging) stops at its
   * next request instead of finishing its searches first.
   */
  stopOn(signal: AbortSignal): void {
    this.wire.stopOn(signal);
  }

  private attempt(request: Exchange, held: HeldBody | undefined, chainIds: number[] | undefined): Promise<unknown> {
    const { url } = request;
    const run = async (): Promise<ReceivedBody> => {
      this.wire.throwIfStopped();
      if (this.rateLimiter) await this.rateLimiter.acquire();
      this.wire.throwIfStopped();
      for (const id of chainIds ?? []) this.chainFigures(id).requests++;
      return this.wire.sendOnce(request);
    };
    // The slot is the exchange only: decoding and parsing wait for the main thread, and a slot
    // held meanwhile would be a request the service could be answering.
    const exchange = this.limit(run);
    if (!held) return exchange.then((received) => this.wire.parseBody(url, received));
    return exchange.then(async (received) => {
      held.received();
      await held.wanted;
      return this.wire.parseBody(url, received);
    });
  }
}

function metaFallback(q: ListQuery): { chainIds: number[]; page: number; limit: number } {
  return { chainIds: q.chainIds, page: q.page ?? 0, limit: q.limit ?? 20 };
}
