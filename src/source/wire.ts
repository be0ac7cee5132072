/**
 * The client's wire: its keep-alive pool and one HTTP exchange under one deadline (headers and
 * body), the body received whole, then decoded from its Content-Encoding (content-encoding.ts) and
 * parsed when its reader wants it. A stop aborts the exchanges in flight and refuses new ones.
 */
import { Agent, type Dispatcher } from 'undici';
import { InsightExportError, InterruptedError } from '../errors.js';
import { HttpStatusError, NetworkError, RequestTimeoutError, ResponseShapeError, UnsupportedContentEncodingError } from './errors.js';
import { contentCodings, decodeBody, DECODABLE_ENCODINGS, unsupportedCoding } from './content-encoding.js';
import { parseRetryAfter } from './retry.js';
import { errorMessageOf } from './error-body.js';
import type { ClientStats } from './client-stats.js';

/** Error bodies are read only this far, for their message. */
const MAX_ERROR_BODY = 64 * 1024;

/** A 2xx answer's body as it came over the wire. */
export interface ReceivedBody {
  body: Buffer;
  contentEncoding: string | string[] | undefined;
}

/** One HTTP request as sent: where, what and with which headers. */
export interface Exchange {
  origin: string;
  path: string;
  /** origin + path, for messages. */
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | undefined;
}

export class Wire {
  private readonly agent: Agent;
  private stopSignal: AbortSignal | undefined;
  private readonly requestListeners = new Set<() => void>();

  constructor(
    private readonly timeoutMs: number,
    connections: number,
    private readonly stats: ClientStats,
  ) {
    this.agent = new Agent({
      connections,
      // Our own deadline covers headers and body together; these are only a backstop.
      headersTimeout: this.timeoutMs + 1_000,
      bodyTimeout: this.timeoutMs + 1_000,
      connectTimeout: Math.min(this.timeoutMs, 10_000),
    });
  }

  /** The signal a stop aborts (see stopOn), for waits between attempts. */
  get stop(): AbortSignal | undefined {
    return this.stopSignal;
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

  throwIfStopped(): void {
    if (this.stopSignal?.aborted) throw new InterruptedError(String(this.stopSignal.reason ?? 'a signal'));
  }

  /** One HTTP exchange under one deadline: the status checked and the body received whole. */
  async sendOnce({ origin, path, url, method, headers, body }: Exchange): Promise<ReceivedBody> {
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
  async parseBody(url: string, received: ReceivedBody): Promise<unknown> {
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

  /** Releases the keep-alive pool (waits for requests in flight). */
  async close(): Promise<void> {
    await this.agent.close();
  }
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
