/**
 * An HTTP proxy in front of an S3 endpoint that loses the answer to one write, as a gateway killed
 * while it answers does: the first PUT whose path `losesAnswer` picks is passed on and lands, its
 * answer is dropped (the client's connection closed), and every later PUT of the same key is
 * answered 503 (the gateway still down for it: each retry fails until the retry budget is spent).
 * Every other request goes through unchanged. `losesAnswer` sees every request, in order.
 *
 *   const proxy = await startS3FaultProxy(endpoint, (method, path) => method === 'PUT' && path.includes('/completed/'));
 *   // point S3_ENDPOINT at proxy.url; proxy.lost names the key whose answer was lost
 *   await proxy.close();
 */
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface S3FaultProxy {
  url: string;
  /** The path (bucket/key) of the PUT whose answer was lost; null until one was. */
  readonly lost: string | null;
  /** Requests answered 503 (retries of the lost write). */
  readonly refused: number;
  close(): Promise<void>;
}

const SLOW_DOWN = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>down</Message></Error>';

export async function startS3FaultProxy(upstream: string, losesAnswer: (method: string, path: string) => boolean): Promise<S3FaultProxy> {
  const target = new URL(upstream);
  let lost: string | null = null;
  let refused = 0;
  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://proxy').pathname);
    if (req.method === 'PUT' && lost === path) {
      refused++;
      res.writeHead(503, { 'content-type': 'application/xml' }).end(SLOW_DOWN);
      return;
    }
    const loses = lost === null && losesAnswer(req.method ?? 'GET', path) && req.method === 'PUT';
    if (loses) lost = path;
    const answer = await forward(req, body);
    if (loses) {
      req.socket.destroy();
      return;
    }
    res.writeHead(answer.status, answer.headers).end(answer.body);
  }
  function forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    const headers = { ...req.headers };
    delete headers.expect;
    delete headers.connection;
    return new Promise((resolve, reject) => {
      const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
        readAll(answer).then((b) => {
          const h = { ...answer.headers };
          delete h['transfer-encoding'];
          delete h.connection;
          resolve({ status: answer.statusCode ?? 502, headers: { ...h, 'content-length': String(b.length) }, body: b });
        }, reject);
      });
      out.on('error', reject);
      out.end(body);
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get lost() {
      return lost;
    },
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}
