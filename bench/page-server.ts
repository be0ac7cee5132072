/**
 * The benchmark's read-interface server, run in its own process so that its CPU and memory are
 * not the exporter's. It serves the seeded sandbox data (src/sandbox) through a cache: the first
 * time a request (path + query) is seen its JSON body is rendered by the sandbox and kept; every
 * later identical request is answered from memory, so a measured run costs the server little more
 * than writing bytes to a socket. Like a CDN in front of the service, it answers in the encoding
 * the request accepts (packages/sandbox/src/cdn-compression.ts), compressing each cached page once per encoding.
 *
 *   node --import tsx bench/page-server.ts --transactions 1000000 [--seed 42] [--cache-mb 4096]
 *
 * Prints `url=`, `wallet=`, `range_end=` lines, then serves until SIGTERM. Control routes (GET):
 *   /_bench/reset                     clears stats and the request log; refills the rate bucket
 *   /_bench/settings?latency_ms=&rps=&retry_after=&bandwidth_mbps=&encoding=
 *        fixed latency per request (from its arrival to its answer: the page is made meanwhile);
 *        a token-bucket limit (0 = off); one link of that many Mbit/s
 *        shared by every answer (0 = unlimited); encoding=cdn (default) or identity (never compress)
 *   /_bench/stats                     counts by status, cache hits/misses, first/last 200 times
 *   /_bench/log                       list requests (path + query) since the last reset, arrival order
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { buildSandboxData, serveReadInterface } from '@insight-export/sandbox';
import { cdnCompress, cdnEncoding, type CdnEncoding } from '@insight-export/sandbox';
import type { PageServerStats } from './page-server-stats.js';

interface Args {
  transactions: number;
  seed: number;
  cacheMB: number;
}

function parseArgs(argv: string[]): Args {
  const get = (name: string, fallback: number) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  return { transactions: get('transactions', 1_000_000), seed: get('seed', 42), cacheMB: get('cache-mb', 4096) };
}

const args = parseArgs(process.argv.slice(2));
const data = buildSandboxData({ seed: args.seed, transactions: args.transactions });
// The sandbox renders the pages (its own wire conventions); this process caches and serves them.
const origin = await serveReadInterface(data, { host: '127.0.0.1', port: 0, compress: false });

/** A rendered page and its compressed forms, made when first asked for. */
type CachedPage = { identity: Buffer } & Partial<Record<CdnEncoding, Buffer>>;
const cache = new Map<string, CachedPage>();
let cachedBytes = 0;
const cacheLimit = args.cacheMB * 1024 * 1024;
let latencyMs = 0;
let rps = 0;
let retryAfter = 1;
let bandwidthMbps = 0;
let compress = true;
/** performance.now() at which the simulated link has sent everything queued on it. */
let linkFreeAt = 0;
let tokens = 0;
let lastRefill = performance.now();
let log: string[] = [];
let stats: PageServerStats;
let cpuAtReset = process.cpuUsage();

function resetStats(): void {
  stats = {
    requests: 0,
    byStatus: {},
    hits: 0,
    misses: 0,
    first200: null,
    last200: null,
    bytes: 0,
    identityBytes: 0,
    cachedMB: 0,
    rssMB: 0,
    firstRequest: null,
    inFlightMs: 0,
    cpuMs: 0,
  };
  cpuAtReset = process.cpuUsage();
  log = [];
  tokens = Math.max(rps, 1);
  lastRefill = performance.now();
}
resetStats();

/** The sandbox server's own token bucket: burst = rps, refilled continuously. */
function takeToken(): boolean {
  if (rps <= 0) return true;
  const now = performance.now();
  tokens = Math.min(Math.max(rps, 1), tokens + ((now - lastRefill) / 1000) * rps);
  lastRefill = now;
  if (tokens >= 1) {
    tokens -= 1;
    return true;
  }
  return false;
}

function fetchOrigin(path: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: origin.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 500, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Bytes of the link written at once: small enough that concurrent answers share it fairly. */
const LINK_CHUNK = 16 * 1024;

/**
 * How far behind the clock the link may be and still count as busy: a timer that fires late (a
 * loaded machine) lets the link catch up this much instead of losing the time (a token bucket's burst).
 */
const LINK_SLACK_MS = 20;

/** Writes the body through the simulated link: each chunk leaves when the link has carried it. */
async function writeThroughLink(res: ServerResponse, buf: Buffer): Promise<void> {
  const bytesPerMs = (bandwidthMbps * 1e6) / 8 / 1000;
  for (let at = 0; at < buf.length; at += LINK_CHUNK) {
    const chunk = buf.subarray(at, at + LINK_CHUNK);
    const now = performance.now();
    linkFreeAt = Math.max(now - LINK_SLACK_MS, linkFreeAt) + chunk.length / bytesPerMs;
    if (linkFreeAt - now >= 1) await new Promise((r) => setTimeout(r, linkFreeAt - now));
    res.write(chunk);
  }
  res.end();
}

function send(
  res: ServerResponse,
  status: number,
  body: Buffer | string,
  headers: Record<string, string> = {},
  counted = true,
  identityLength?: number,
): void {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  if (counted) stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
  if (counted && status === 200) {
    const now = performance.now();
    stats.first200 ??= now;
    stats.last200 = now;
    stats.bytes += buf.length;
    stats.identityBytes += identityLength ?? buf.length;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(buf.length), ...headers });
  if (counted && bandwidthMbps > 0) void writeThroughLink(res, buf).catch(() => res.destroy());
  else res.end(buf);
}

/** An answer ready to send: the page in the encoding the request accepts, or the origin's error. */
interface Prepared {
  status: number;
  body: Buffer;
  encoding?: string;
  identityLength?: number;
}

/** The answer to `path`: from the cache, else rendered by the origin; compressed on first use, then kept. */
async function prepare(req: IncomingMessage, path: string): Promise<Prepared> {
  let page = cache.get(path);
  if (page) stats.hits++;
  else {
    stats.misses++;
    const answer = await fetchOrigin(path);
    if (answer.status !== 200) return { status: answer.status, body: answer.body };
    page = { identity: answer.body };
    if (cachedBytes + answer.body.length <= cacheLimit) {
      cache.set(path, page);
      cachedBytes += answer.body.length;
    }
  }
  const encoding = compress ? cdnEncoding(req.headers['accept-encoding'], page.identity.length) : undefined;
  if (encoding === undefined) return { status: 200, body: page.identity };
  let body = page[encoding];
  if (!body) {
    body = await cdnCompress(page.identity, encoding);
    page[encoding] = body;
    cachedBytes += body.length;
  }
  return { status: 200, body, encoding, identityLength: page.identity.length };
}

function sendPrepared(res: ServerResponse, p: Prepared): void {
  if (p.encoding === undefined) return send(res, p.status, p.body);
  send(res, 200, p.body, { 'content-encoding': p.encoding, vary: 'accept-encoding' }, true, p.identityLength);
}

function control(url: URL, res: ServerResponse): void {
  switch (url.pathname) {
    case '/_bench/reset':
      resetStats();
      return send(res, 200, '{}', {}, false);
    case '/_bench/settings': {
      const q = url.searchParams;
      if (q.has('latency_ms')) latencyMs = Number(q.get('latency_ms'));
      if (q.has('rps')) rps = Number(q.get('rps'));
      if (q.has('retry_after')) retryAfter = Number(q.get('retry_after'));
      if (q.has('bandwidth_mbps')) bandwidthMbps = Number(q.get('bandwidth_mbps'));
      if (q.has('encoding')) compress = q.get('encoding') !== 'identity';
      resetStats();
      return send(res, 200, JSON.stringify({ latencyMs, rps, retryAfter, bandwidthMbps, compress }), {}, false);
    }
    case '/_bench/stats':
      stats.cachedMB = Math.round(cachedBytes / 1024 / 1024);
      stats.rssMB = Math.round(process.memoryUsage().rss / 1024 / 1024);
      {
        const used = process.cpuUsage(cpuAtReset);
        stats.cpuMs = Math.round((used.user + used.system) / 1000);
      }
      return send(res, 200, JSON.stringify(stats), {}, false);
    case '/_bench/log':
      return send(res, 200, JSON.stringify(log), {}, false);
    default:
      return send(res, 404, '{"error":"unknown control route"}', {}, false);
  }
}

async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = req.url ?? '/';
  if (path.startsWith('/_bench/')) return control(new URL(path, 'http://bench.local'), res);
  stats.requests++;
  const arrived = performance.now();
  stats.firstRequest ??= arrived;
  res.once('finish', () => (stats.inFlightMs += performance.now() - arrived));
  log.push(path);
  if (latencyMs > 0) {
    // The answer is made while the latency runs, so every request takes the same latency: a page
    // the cache lacks (an exporter's request the warm-up did not make) would otherwise also cost
    // its rendering and compression, which the limit's replay of cached requests never pays.
    const [, ready] = await Promise.all([new Promise((r) => setTimeout(r, latencyMs)), prepare(req, path)]);
    if (!takeToken()) return send(res, 429, '{"error":"rate limit exceeded"}', { 'retry-after': String(retryAfter) });
    return sendPrepared(res, ready);
  }
  if (!takeToken()) return send(res, 429, '{"error":"rate limit exceeded"}', { 'retry-after': String(retryAfter) });
  sendPrepared(res, await prepare(req, path));
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  onRequest(req, res).catch((err: unknown) => {
    if (!res.headersSent) send(res, 500, JSON.stringify({ error: String(err) }));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;

const wallet = data.wallets[0]!;
// The UTC day after the newest chain head: a range that covers every row of the wallet.
const newest = Math.max(...data.chains.map((c) => c.headTimestamp));
const rangeEnd = new Date((Math.floor(newest / 86_400) + 1) * 86_400_000).toISOString().slice(0, 10);
process.stdout.write(
  `url=http://127.0.0.1:${port}/insights/v1\nwallet=${wallet.address}\nwallet_rows=${wallet.transactionCount}\n` +
    `wallet_rows_by_chain=${JSON.stringify(wallet.transactionsByChain)}\nrange_end=${rangeEnd}\n` +
    `transactions=${data.transactionTotal}\nready\n`,
);
const stop = () => {
  server.close();
  server.closeAllConnections();
  void origin.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
