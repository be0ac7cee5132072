import type { ResolvedConfig } from '../config/index.js';
import type { Logger } from '../log.js';
import { ConfigError } from '../config/index.js';
import { InsightClient } from '../source/client.js';
import { createRateLimiter } from '../source/rate-limiter.js';
import type { Sandbox } from '@insight-export/sandbox';

export interface SourceSession {
  client: InsightClient;
  /** Set when the job runs against the built-in sandbox (base_url: sandbox). */
  sandbox: Sandbox | null;
  close(): Promise<void>;
}

/**
 * Share of requests_per_second the run paces itself at. Requests reach the server with a few ms
 * of jitter and its clock is not ours: paced at exactly the limit, one request in a few dozen
 * arrives a little early and is answered 429, which pauses every request for Retry-After
 * (bench/: 3% of requests were 429 at 100%, none at 97%).
 */
const RATE_HEADROOM = 0.97;

/**
 * The run's shared budget: evenly spaced requests. Bucket size 2, not requestsPerSecond: no burst
 * at the start (a server counting per second would refuse it), while a timer that fires late can
 * still be caught up with instead of losing that time.
 */
export function runRateLimiter(requestsPerSecond: number) {
  return createRateLimiter(requestsPerSecond * RATE_HEADROOM, 2);
}

/** The read-interface client the config asks for; starts the in-process sandbox for `sandbox`. */
export async function openSource(config: ResolvedConfig, logger: Logger): Promise<SourceSession> {
  let sandbox: Sandbox | null = null;
  let baseUrl = config.source.baseUrl;
  let explorerUrl = config.source.explorerUrl;
  if (config.source.sandbox) {
    // The sandbox (and the ABI encoding it loads) only for runs against it: a run against a service does not pay for it.
    const { startSandbox } = await import('@insight-export/sandbox');
    sandbox = await startSandbox({});
    baseUrl = sandbox.url;
    explorerUrl = explorerUrl ?? sandbox.explorerUrl;
    logger.info({ url: sandbox.url }, 'started the built-in sandbox');
  }
  if (!baseUrl) {
    throw new ConfigError('No read-interface base URL is set', {
      hint: 'Set source.base_url in the job (or "sandbox"), INSIGHT_BASE_URL, or --base-url.',
    });
  }
  const client = new InsightClient({
    baseUrl,
    explorerBaseUrl: explorerUrl ?? undefined,
    clientId: config.auth.clientId?.reveal(),
    secretKey: config.auth.secretKey?.reveal(),
    timeoutMs: config.retries.timeoutMs,
    maxAttempts: config.retries.maxAttempts,
    chainIdsPerRequest: config.source.chainIdsPerRequest,
    maxInFlight: config.concurrency.requestsInFlight,
    connections: config.concurrency.requestsInFlight,
    rateLimiter: config.concurrency.requestsPerSecond > 0 ? runRateLimiter(config.concurrency.requestsPerSecond) : undefined,
    logger,
  });
  return {
    client,
    sandbox,
    async close() {
      await client.close();
      await sandbox?.close();
    },
  };
}
