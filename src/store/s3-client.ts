/**
 * The S3Client of an S3Store: its configuration for AWS or another S3 (radosgw, MinIO), the SDK's
 * warnings passed to the run's logger, its retries counted, and the Content-MD5 older S3 servers
 * want on DeleteObjects.
 */
import { createHash } from 'node:crypto';
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { Logger } from '../log.js';
import type { S3StoreOptions } from './s3.js';

/** A client for the store's options; the SDK's own retries are added to `stats`. */
export function createS3Client(opts: S3StoreOptions, log: Logger, stats: { retries: number }): S3Client {
  const custom = opts.endpoint !== undefined && opts.endpoint !== '';
  const config: S3ClientConfig = {
    region: opts.region ?? (custom ? 'us-east-1' : undefined),
    maxAttempts: opts.maxAttempts ?? 3,
    requestHandler: {
      connectionTimeout: opts.connectionTimeoutMs ?? 5_000,
      socketTimeout: opts.socketTimeoutMs ?? 60_000,
    },
  };
  if (opts.credentials) config.credentials = opts.credentials;
  config.logger = sdkLogger(log);
  if (custom) {
    config.endpoint = opts.endpoint;
    config.forcePathStyle = opts.forcePathStyle ?? true;
    // Otherwise streamed PUTs go aws-chunked with trailing checksums, which radosgw answers with 411.
    config.requestChecksumCalculation = 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  } else {
    if (opts.forcePathStyle !== undefined) config.forcePathStyle = opts.forcePathStyle;
    config.followRegionRedirects = true;
  }
  const client = new S3Client(config);
  addContentMd5ToDeleteObjects(client);
  countSdkRetries(client, stats);
  return client;
}

/**
 * The SDK prints its warnings with console.warn unless given a logger. Only warnings and errors
 * are passed on (its info lines carry whole command inputs); the warning that accompanies every
 * failed streamed PUT (a 412 included) adds nothing to the error thrown and goes to debug.
 */
function sdkLogger(log: Logger): NonNullable<S3ClientConfig['logger']> {
  const noop = () => undefined;
  // The SDK logs a failed command with its input: never its Body (a state object or a whole buffered
  // data file, rendered as a JSON array of bytes).
  const omitBody = (key: string, value: unknown) => (key === 'Body' ? '[body omitted]' : value);
  const text = (args: unknown[]) => args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a, omitBody))).join(' ');
  return {
    trace: noop,
    debug: noop,
    info: noop,
    warn: (...args: unknown[]) => {
      const msg = text(args);
      if (msg.includes('non-retryable streaming request')) log.debug({ sdk: msg }, 'aws-sdk');
      else log.warn({ sdk: msg }, 'aws-sdk warning');
    },
    error: (...args: unknown[]) => {
      // 404 (absent key) and 412 (a conditional write lost) are answers the store turns into
      // results (null, PreconditionFailedError), not errors of the run.
      const status = (args[0] as { metadata?: { httpStatusCode?: number } } | undefined)?.metadata?.httpStatusCode;
      if (status === 404 || status === 412) log.debug({ sdk: text(args) }, 'aws-sdk');
      else log.error({ sdk: text(args) }, 'aws-sdk error');
    },
  };
}

/** The origin of an endpoint URL (credentials, path and query left out); "aws" when none is given. */
export function endpointOrigin(endpoint: string | undefined): string {
  if (!endpoint) return 'aws';
  try {
    return new URL(endpoint).origin;
  } catch {
    return '(unparsable endpoint)';
  }
}

/** Adds the SDK's own retries of each command (its attempts beyond the first, answered or failed) to `stats`. */
function countSdkRetries(client: S3Client, stats: { retries: number }): void {
  const retriesOf = (x: unknown) => Math.max(((x as { $metadata?: { attempts?: number } } | undefined)?.$metadata?.attempts ?? 1) - 1, 0);
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        const out = await next(args);
        stats.retries += retriesOf(out.output);
        return out;
      } catch (err) {
        stats.retries += retriesOf(err);
        throw err;
      }
    },
    { step: 'initialize', name: 'insightExportCountRetries' },
  );
}

/**
 * DeleteObjects needs an integrity header. SDK v3 sends a CRC32 checksum; older radosgw and other
 * S3-compatible servers want Content-MD5, so it is added too.
 */
function addContentMd5ToDeleteObjects(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const req = args.request as { headers?: Record<string, string>; body?: unknown } | undefined;
      if (
        context.commandName === 'DeleteObjectsCommand' &&
        req?.headers &&
        (typeof req.body === 'string' || req.body instanceof Uint8Array)
      ) {
        req.headers['content-md5'] = createHash('md5').update(req.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', name: 'insightExportDeleteObjectsContentMd5' },
  );
}
