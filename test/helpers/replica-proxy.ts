/**
 * A load balancer in front of several servers of the same data (replicas), choosing one per
 * request: as a client of an indexer whose replicas stand at different heights sees it. The choice
 * is drawn from `seed` and a count of requests, so a sequence of requests is answered the same
 * way on every run; `pick` overrides it (e.g. to make the service consistent again).
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hash3, unit } from '../../src/sandbox/prng.js';

export interface ReplicaProxy {
  /** Base URL to use (the replicas' path prefix). */
  url: string;
  /** Requests forwarded to each replica, by index. */
  served: number[];
  /** From now on every request goes to this replica (undefined: drawn again). */
  only(replica: number | undefined): void;
  close(): Promise<void>;
}

export async function startReplicaProxy(replicaUrls: string[], seed = 1): Promise<ReplicaProxy> {
  const targets = replicaUrls.map((u) => new URL(u));
  const served = targets.map(() => 0);
  let fixed: number | undefined;
  let count = 0;
  const server = createServer((req, res) => {
    const i = fixed ?? Math.floor(unit(hash3(seed, ++count, 0x5e)) * targets.length);
    served[i]!++;
    const target = targets[i]!;
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${targets[0]!.pathname.replace(/\/$/, '')}`,
    served,
    only: (replica) => {
      fixed = replica;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
