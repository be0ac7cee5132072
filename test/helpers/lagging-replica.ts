/**
 * A load balancer in front of two servers of the same data: the service's full index and a replica
 * whose index ends at `until` (unix seconds; `indexedUntil`). While it lags, the list routes
 * (wallet transactions, contract events: their pages and their counts) are answered by the
 * replica and everything else (resolve: chain heads, window edges) by the full index, as a
 * balancer choosing a replica per request can; `consistent()` sends every request to the full
 * index. Every request URL is recorded, in arrival order.
 *
 *   const lb = await startLaggingReplica(sandbox.data, unixTime('2024-02-02T12:00:00Z'));
 *   await run(lb.url); lb.consistent(); await run(lb.url);
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveReadInterface, type SandboxData, type SandboxOptions } from '@insight-export/sandbox';

export interface LaggingReplica {
  /** Base URL of the balancer (the read interface's path prefix). */
  url: string;
  requests: URL[];
  /** From now on every request goes to the full index. */
  consistent(): void;
  close(): Promise<void>;
}

const LIST_ROUTE = /\/(wallets\/[^/]+\/transactions|events\/[^/]+\/[^/]+)$/;

export async function startLaggingReplica(data: SandboxData, until: number, opts: SandboxOptions = {}): Promise<LaggingReplica> {
  const full = await serveReadInterface(data, opts);
  const replica = await serveReadInterface(data, { ...opts, indexedUntil: until });
  const requests: URL[] = [];
  let lagging = true;
  const forward = (target: URL, req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', new URL(full.url).origin);
    requests.push(url);
    forward(new URL(lagging && LIST_ROUTE.test(url.pathname) ? replica.url : full.url), req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${new URL(full.url).pathname.replace(/\/$/, '')}`,
    requests,
    consistent: () => {
      lagging = false;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([full.close(), replica.close()]);
    },
  };
}
