import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { cdnCompress, cdnEncoding } from './cdn-compression.js';
import { jsonText } from './go-values.js';
import type { RequestStats } from './request-stats.js';
import type { SandboxOptions } from './options.js';
import { SerialisedBody } from './stale-cache.js';
import type { Timers } from './timers.js';

/** TCP RST where the platform allows it (the peer sees ECONNRESET), else a plain close. */
export function resetSocket(socket: Socket): void {
  const s = socket as Socket & { resetAndDestroy?: () => Socket };
  if (typeof s.resetAndDestroy === 'function' && !s.destroyed) s.resetAndDestroy();
  else s.destroy();
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** How the server writes answers: the JSON text, its compression, the error shape, and the broken bodies faults ask for. */
export class Replies {
  constructor(
    private readonly opts: SandboxOptions,
    private readonly stats: RequestStats,
    private readonly timers: Timers,
  ) {}

  /** The JSON text of a body as sent (a SerialisedBody's own text). */
  text(body: unknown): string {
    if (body instanceof SerialisedBody) return body.text;
    return body === undefined ? '' : jsonText(body, this.opts.goValues === true);
  }

  /** An error answer in the service's shape: {error} (contract) or {code, message, support_id} (insight). */
  errorBody(status: number, message: string): unknown {
    return this.opts.insightErrorBodies ? { code: status, message, support_id: 'TODO' } : { error: message };
  }

  sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
    this.send(res, status, this.errorBody(status, message), headers);
  }

  /** A load balancer's error page (nginx's, padded as such pages are), not the service's JSON. */
  sendHtmlPage(res: ServerResponse, status: number): void {
    const title = `${status} ${status === 502 ? 'Bad Gateway' : 'Service Temporarily Unavailable'}`;
    const padding = '<!-- a padding to disable MSIE and Chrome friendly error page -->\n'.repeat(6);
    const page = `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n${padding}`;
    this.stats.status(status);
    res.writeHead(status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(page) });
    res.end(page);
  }

  send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = this.text(body);
    this.stats.status(status);
    const encoding = this.opts.compress === false ? undefined : cdnEncoding(res.req.headers['accept-encoding'], Buffer.byteLength(text));
    if (encoding === undefined) {
      res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
      return;
    }
    cdnCompress(Buffer.from(text), encoding).then(
      (buf) => {
        res.writeHead(status, {
          'content-type': JSON_TYPE,
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

  /** A connection reset: half before any byte, half after the headers and a few body bytes. */
  reset(res: ServerResponse, afterHeaders: boolean): void {
    if (afterHeaders) {
      this.stats.status(200);
      res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': 1_000_000 });
      res.write('{"meta":');
      setImmediate(() => resetSocket(res.req.socket));
    } else {
      resetSocket(res.req.socket);
    }
  }

  /**
   * Half of the body under a Content-Length that promised all of it, then the socket closes
   * (truncated) or stays silent for `stallMs` first (stalled).
   */
  sendCut(res: ServerResponse, status: number, body: unknown, cut: 'truncate' | 'stall', stallMs: number): void {
    const buf = Buffer.from(this.text(body));
    this.stats.status(status);
    res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': buf.length });
    res.write(buf.subarray(0, Math.max(1, Math.floor(buf.length / 2))));
    if (cut === 'truncate') setImmediate(() => res.socket?.destroy());
    else this.timers.after(stallMs, () => res.socket?.destroy());
  }
}
