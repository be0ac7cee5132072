import { ExitCode, InsightExportError, UserInputError, type ErrorParameters } from '../errors.js';

/** A request that breaks the read-interface contract; raised before anything is sent. */
export class RequestValidationError extends UserInputError {
  override name = 'RequestValidationError';
  /** The offending parameter: 'chainIds', 'filters.filter_value_gte', 'signature', ... */
  readonly parameter: string;
  constructor(parameter: string, problem: string, params: ErrorParameters = {}) {
    super(`Invalid request parameter ${parameter}: ${problem}`, params);
    this.parameter = parameter;
  }
}

export type ResponseProblem = 'truncated' | 'invalid_json' | 'shape';

/**
 * A 2xx response whose body is not what the contract describes: cut short, not JSON, or JSON of
 * the wrong shape. `jsonPath` points at the problem ('$.data[3].block_number').
 */
export class ResponseShapeError extends InsightExportError {
  override name = 'ResponseShapeError';
  readonly url: string;
  readonly jsonPath: string;
  readonly problem: ResponseProblem;
  constructor(problem: ResponseProblem, url: string, jsonPath: string, what: string, cause?: unknown) {
    super(`Unexpected response from the read interface: ${what}`, {
      details: `${url} at ${jsonPath}`,
      hint:
        problem === 'shape'
          ? 'The service sent a shape this client does not know; check the base URL and API version.'
          : 'The response body was cut short or is not JSON; this is usually transient.',
      cause,
    });
    this.problem = problem;
    this.url = url;
    this.jsonPath = jsonPath;
  }
}

/**
 * A 2xx whose body is not a page: an `{"error"}` body, or `data` missing or null where rows were
 * asked for. The service failed behind a success status: transient, retried like a 5xx, never
 * taken for an empty page.
 */
export class NotAPageError extends InsightExportError {
  override name = 'NotAPageError';
  readonly url: string;
  readonly serverMessage: string | undefined;
  constructor(url: string, what: string, serverMessage: string | undefined) {
    super(`The read interface answered a success with ${what}${serverMessage ? `: ${serverMessage}` : ''}`, {
      details: url,
      hint: 'The service failed behind a 2xx status; usually transient. If it persists, report the message to the service.',
    });
    this.url = url;
    this.serverMessage = serverMessage;
  }
}

/** A non-2xx answer. `serverMessage` is the `{"error"}` text (or the older `{code, message}`). */
export class HttpStatusError extends InsightExportError {
  override name = 'HttpStatusError';
  readonly status: number;
  readonly url: string;
  readonly serverMessage: string | undefined;
  readonly supportId: string | undefined;
  /** Parsed Retry-After in milliseconds, when the server sent one. */
  readonly retryAfterMs: number | undefined;
  /** A 4xx other than 408/429 (the key, the base URL or the query is wrong): retrying cannot help, exit 2. */
  override readonly exitCode: ExitCode = ExitCode.failed;
  constructor(
    status: number,
    url: string,
    serverMessage: string | undefined,
    extra: { supportId?: string | undefined; retryAfterMs?: number | undefined } = {},
  ) {
    super(`HTTP ${status} from the read interface${serverMessage ? `: ${serverMessage}` : ''}`, {
      details: url,
      hint: statusHint(status),
      metaMessages: extra.supportId ? [`support id: ${extra.supportId}`] : undefined,
    });
    this.status = status;
    this.url = url;
    this.serverMessage = serverMessage;
    this.supportId = extra.supportId;
    this.retryAfterMs = extra.retryAfterMs;
    if (isPermanentStatus(status)) this.exitCode = ExitCode.badInput;
  }
}

/** Statuses that say the request itself is refused, whatever the moment: every 4xx but a timeout (408) and a rate limit (429). */
export function isPermanentStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

function statusHint(status: number): string | undefined {
  if (status === 401) return 'Check INSIGHT_CLIENT_ID / INSIGHT_SECRET_KEY.';
  if (status === 403) return 'The key is valid but not enabled for this service or chain.';
  if (status === 404) {
    return 'Nothing answers at this path: check the path prefix of the base URL (--base-url, source.base_url, INSIGHT_BASE_URL), e.g. /insights/v1 or /v1 as your service serves it. (For decode, a 404 means the service has no ABI for the contract.)';
  }
  if (status === 429) return 'Rate limited: lower the requests-per-second budget or concurrency.';
  if (status >= 500) return 'Server-side failure; usually transient.';
  if (status === 400)
    return 'The service rejected the request parameters (a filter, group_by or aggregate expression it does not accept?): fix the job; retrying cannot help.';
  return undefined;
}

export class RequestTimeoutError extends InsightExportError {
  override name = 'RequestTimeoutError';
  readonly url: string;
  readonly timeoutMs: number;
  /** 'headers': no response yet; 'body': headers arrived but the body stalled. */
  readonly phase: 'headers' | 'body';
  constructor(url: string, timeoutMs: number, phase: 'headers' | 'body') {
    super(`Request timed out after ${timeoutMs} ms waiting for the response ${phase}`, {
      details: url,
      hint: 'Raise timeoutMs or lower concurrency if the service is slow.',
    });
    this.url = url;
    this.timeoutMs = timeoutMs;
    this.phase = phase;
  }
}

/** Connection-level failure (reset, refused, socket closed) before a response arrived. */
export class NetworkError extends InsightExportError {
  override name = 'NetworkError';
  readonly url: string;
  readonly code: string | undefined;
  constructor(url: string, code: string | undefined, cause: unknown) {
    super(`Network error talking to the read interface${code ? ` (${code})` : ''}`, {
      details: url,
      hint: networkHint(url, code),
      cause,
    });
    this.url = url;
    this.code = code;
  }
}

/** What to do about a connection-level failure: the codes that mean "nothing is there" point at the URL. */
export function networkHint(url: string, code: string | undefined): string | undefined {
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // keep the whole text
  }
  if (code === 'ECONNREFUSED')
    return `Nothing accepts connections at ${origin}: check the host and port of the base URL, and that the server is running.`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `The host of ${origin} does not resolve: check the base URL (and DNS).`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `No route to ${origin}: check the base URL and the network.`;
  return undefined;
}

/** A request given up after its attempts: the URL, how many, and the final attempt's error. */
export abstract class RequestGivenUpError<Cause extends Error = Error> extends InsightExportError {
  readonly url: string;
  readonly attempts: number;
  readonly lastCause: Cause;
  constructor(message: string, url: string, attempts: number, lastCause: Cause, params: Omit<ErrorParameters, 'details' | 'cause'>) {
    super(message, { ...params, details: url, cause: lastCause });
    this.url = url;
    this.attempts = attempts;
    this.lastCause = lastCause;
  }
}

/** Every attempt of a retryable request failed; `lastCause` is the final attempt's error. */
export class RetriesExhaustedError extends RequestGivenUpError {
  override name = 'RetriesExhaustedError';
  constructor(url: string, attempts: number, lastCause: Error) {
    const short = lastCause instanceof InsightExportError ? lastCause.shortMessage : lastCause.message;
    super(`Request failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${short}`, url, attempts, lastCause, {
      hint:
        (lastCause instanceof NetworkError ? networkHint(url, lastCause.code) : undefined) ??
        (lastCause instanceof HttpStatusError && lastCause.status === 429
          ? 'The service kept rate-limiting: lower --requests-per-second or --requests-in-flight, or retry later.'
          : 'The service kept failing; retry later (the next run resumes), or raise --max-attempts.'),
    });
  }
}

/**
 * The service answered the same HTTP 500 to every attempt of a query of a kind it is known to fail
 * on for good (an event signature it cannot parse, a block it has not indexed, an expression its
 * database rejects): retrying further would only wait. `likelyCause` says which.
 */
export class RepeatedServerError extends RequestGivenUpError<HttpStatusError> {
  override name = 'RepeatedServerError';
  constructor(url: string, attempts: number, lastCause: HttpStatusError, likelyCause: string) {
    const body = lastCause.serverMessage ? `"${lastCause.serverMessage}"` : 'an empty body';
    const message = `The service failed this request ${attempts} times with the same HTTP ${lastCause.status} (${body}): ${likelyCause}`;
    super(message, url, attempts, lastCause, {
      hint: 'Check the query; if it is right, the service is failing: retry later.',
      metaMessages: lastCause.supportId ? [`support id: ${lastCause.supportId}`] : undefined,
    });
  }
}

/** The explorer sent the same next_page_params twice: following it would never end. */
export class PaginationLoopError extends InsightExportError {
  override name = 'PaginationLoopError';
  readonly url: string;
  readonly pageParams: Record<string, string | number>;
  constructor(url: string, pageParams: Record<string, string | number>) {
    super('The explorer repeated the same next_page_params; stopping instead of looping forever', {
      details: `${url} next_page_params=${JSON.stringify(pageParams)}`,
      hint: 'The explorer pagination is broken for this address; report it to the service.',
    });
    this.url = url;
    this.pageParams = pageParams;
  }
}

/** A 2xx body in a Content-Encoding this client cannot decode: asking again gets the same bytes. */
export class UnsupportedContentEncodingError extends InsightExportError {
  override name = 'UnsupportedContentEncodingError';
  readonly url: string;
  readonly encoding: string;
  constructor(url: string, encoding: string, header: string, decodable: readonly string[]) {
    super(`The read interface answered in a Content-Encoding this client cannot decode: ${encoding}`, {
      details: `${url} (Content-Encoding: ${header}; this runtime decodes ${decodable.join(', ')})`,
      hint: 'A proxy or CDN in front of the service chose it; configure it to send one of the decodable encodings or none.',
    });
    this.url = url;
    this.encoding = encoding;
  }
}

/** A held page (HeldBody) its reader gave up before wanting it: its body is dropped undecoded. */
export class PageNotWantedError extends InsightExportError {
  override name = 'PageNotWantedError';
  constructor() {
    super('The page was no longer wanted', { hint: 'Nothing to do: its window stopped before reading it.' });
  }
}

const FAILED_CHAIN = Symbol('insight-export failed chain');

/** Marks the chain a request of several chains' window failed on (the other chains were not asked). */
export function tagFailedChain<E>(err: E, chainId: number): E {
  if (typeof err === 'object' && err !== null && !Object.hasOwn(err, FAILED_CHAIN))
    Object.defineProperty(err, FAILED_CHAIN, { value: chainId, enumerable: false });
  return err;
}

/** The chain tagFailedChain marked on an error, if any. */
export function failedChainOf(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null ? (err as { [FAILED_CHAIN]?: number })[FAILED_CHAIN] : undefined;
}
