/**
 * A proxy in front of one or more servers of the same data, as a client of a real service may
 * meet one: a load balancer choosing a replica per request (replicas at different heights), a
 * broken proxy rewriting list answers (`rewrite`), and a CDN caching list answers (`cacheKey`:
 * the first body of each key is kept, and served instead of the service's once `serveCached` is
 * on, e.g. after a reorganisation). The replica is drawn from `seed` and a count of requests, so
 * a sequence of requests is answered the same way on every run; `only` pins one (the service
 * consistent again).
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hash3, unit } from '@insight-export/sandbox';

export interface AnswerProxy {
  /** Base URL to use (the servers' path prefix). */
  url: string;
  /** Requests forwarded to each server, by index. */
  served: number[];
  /** From now on every request goes to this server (undefined: drawn again). */
  only(server: number | undefined): void;
  /** From now on list answers come from the cache where it holds their key (with `cacheKey`). */
  serveCached(on: boolean): void;
  /** List answers served from the cache. */
  cachedServed: number;
  close(): Promise<void>;
}

export interface AnswerProxyOptions {
  seed?: number;
  /** A list answer (transactions or events route) as the client receives it; `url` is the request's. */
  rewrite?(url: URL, body: { data?: unknown[] }): unknown;
  /** The CDN's key of a list answer's URL (e.g. the URL itself). */
  cacheKey?(url: URL): string;
}

const LIST_ROUTE = /\/(wallets\/[^/]+\/transactions|events\/[^/]+(\/[^/]+)?)$/;

export async function startAnswerProxy(serverUrls: string[], opts: AnswerProxyOptions = {}): Promise<AnswerProxy> {
  const targets = serverUrls.map((u) => new URL(u));
  const served = targets.map(() => 0);
  const seed = opts.seed ?? 1;
  let fixed: number | undefined;
  let count = 0;
  let cachedOn = false;
  const cache = new Map<string, string>();
  const proxy = { cachedServed: 0 };
  const server = createServer((req, res) => {
    const listUrl = new URL(req.url ?? '/', 'http://proxy');
    const key = opts.cacheKey && LIST_ROUTE.test(listUrl.pathname) ? opts.cacheKey(listUrl) : undefined;
    const hit = key === undefined ? undefined : cache.get(key);
    if (cachedOn && hit !== undefined) {
      proxy.cachedServed++;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(hit) });
      res.end(hit);
      return;
    }
    const i = fixed ?? Math.floor(unit(hash3(seed, ++count, 0x5e)) * targets.length);
    served[i]!++;
    const target = targets[i]!;
    const url = new URL(req.url ?? '/', target.origin);
    const listed = LIST_ROUTE.test(url.pathname);
    const rewrite = opts.rewrite && listed ? opts.rewrite : undefined;
    // A rewritten or cached answer is read whole: asked for without compression.
    const headers = { ...req.headers };
    if (rewrite || key !== undefined) delete headers['accept-encoding'];
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (up) =>
      (rewrite || key !== undefined) && up.statusCode === 200
        ? rewritten(up, res, (body) => {
            const out = rewrite ? rewrite(url, body as { data?: unknown[] }) : body;
            if (key !== undefined && !cache.has(key)) cache.set(key, JSON.stringify(out));
            return out;
          })
        : piped(up, res),
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}${targets[0]!.pathname.replace(/\/$/, '')}`,
    served,
    only: (i: number | undefined) => {
      fixed = i;
    },
    serveCached: (on: boolean) => {
      cachedOn = on;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function piped(up: IncomingMessage, res: ServerResponse): void {
  res.writeHead(up.statusCode ?? 502, up.headers);
  up.pipe(res);
}

function rewritten(up: IncomingMessage, res: ServerResponse, rewrite: (body: unknown) => unknown): void {
  const chunks: Buffer[] = [];
  up.on('data', (c: Buffer) => chunks.push(c));
  up.on('end', () => {
    const text = JSON.stringify(rewrite(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
}

/** A broken proxy's rewrite: each chain whose rows fill the page's limit loses its last `rows` rows. */
export function cutFullPages(rows: number): NonNullable<AnswerProxyOptions['rewrite']> {
  return (url, body) => {
    const limit = Number(url.searchParams.get('limit'));
    if (!Array.isArray(body.data) || !(limit > rows)) return body;
    const data = body.data as { chain_id?: unknown }[];
    const byChain = new Map<string, number[]>();
    data.forEach((r, i) => {
      const c = String(r.chain_id);
      byChain.set(c, [...(byChain.get(c) ?? []), i]);
    });
    const dropped = new Set([...byChain.values()].filter((at) => at.length >= limit).flatMap((at) => at.slice(-rows)));
    return { ...body, data: data.filter((_, i) => !dropped.has(i)) };
  };
}
