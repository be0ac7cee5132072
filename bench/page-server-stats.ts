/** What bench/page-server.ts answers at /_bench/stats (counted since the last /_bench/reset). */
export interface PageServerStats {
  requests: number;
  byStatus: Record<string, number>;
  hits: number;
  misses: number;
  /** performance.now() of the first and last answer with status 200 (server clock, ms). */
  first200: number | null;
  last200: number | null;
  /** Bytes of bodies sent with status 200, as sent (compressed or not). */
  bytes: number;
  /** The same bodies' bytes uncompressed. */
  identityBytes: number;
  cachedMB: number;
  rssMB: number;
  /** performance.now() of the first request; ms x requests in flight summed over time (mean concurrency = inFlightMs / span). */
  firstRequest: number | null;
  inFlightMs: number;
  /** CPU of this process (every thread: rendering pages the cache lacks, compressing, sending) since the reset. */
  cpuMs: number;
}
