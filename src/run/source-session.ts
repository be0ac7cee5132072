import type { ResolvedConfig } from '../config/index.js';
import type { Logger } from '../log.js';
import { ConfigError } from '../config/index.js';
import { InsightClient } from '../source/client.js';
import { createRateLimiter } from '../source/rate-limiter.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';

export interface SourceSession {
  client: InsightClient;
  /** Set when the job runs against the built-in sandbox (base_url: sandbox). */
  sandbox: Sandbox | null;
  close(): Promise<void>;
}

/** The read-interface client the config asks for; starts the in-process sandbox for `sandbox`. */
export async function openSource(config: ResolvedConfig, logger: Logger): Promise<SourceSession> {
  let sandbox: Sandbox | null = null;
  let baseUrl = config.source.baseUrl;
  let explorerUrl = config.source.explorerUrl;
  if (config.source.sandbox) {
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
    maxInFlight: config.concurrency.requestsInFlight,
    connections: config.concurrency.requestsInFlight,
    rateLimiter: config.concurrency.requestsPerSecond > 0 ? createRateLimiter(config.concurrency.requestsPerSecond) : undefined,
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
