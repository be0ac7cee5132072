import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { Logger } from '../log.js';
import { InvalidDestinationError } from './errors.js';
import { LocalStore, type LocalStoreOptions } from './local.js';
import { foreignPathProblem, resolveLocalPath } from './local-path.js';
import type { S3StoreOptions } from './s3.js';
import type { ObjectStore } from './store.js';

/** Structurally the same as the job/config layer's parsed destination. */
export type StoreDestination = { kind: 'local'; path: string } | { kind: 's3'; bucket: string; prefix: string };

export interface OpenStoreOptions {
  /** From the resolved config (env S3_ENDPOINT / AWS_ENDPOINT_URL_S3, AWS_REGION ...). */
  s3?: {
    endpoint?: string | null | undefined;
    region?: string | null | undefined;
    forcePathStyle?: boolean | undefined;
    /** See S3StoreOptions.retryBudgetMs. */
    retryBudgetMs?: number | undefined;
    /** Default: the AWS default credential chain. */
    credentials?: S3ClientConfig['credentials'];
  };
  /** Tuning passed to S3Store (part size, timeouts ...). */
  s3Tuning?: Omit<S3StoreOptions, 'bucket' | 'prefix' | 'endpoint' | 'region' | 'forcePathStyle' | 'credentials' | 'logger'>;
  local?: LocalStoreOptions;
  logger?: Logger;
  /** Base for relative local paths (default process.cwd()). */
  cwd?: string;
}

const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** What S3's bucket naming rules ask of this name. */
function bucketNameFix(bucket: string): string {
  const rules = 'bucket names are lowercase, no underscores: 3 to 63 letters, digits, dots and hyphens';
  const named = bucket.toLowerCase().replace(/_/g, '-');
  return BUCKET_RE.test(named) && !named.includes('..') ? `${rules} (e.g. "${named}")` : rules;
}

/**
 * "s3://bucket/prefix" -> S3Store; anything else is a local directory (relative to cwd) -> LocalStore.
 * Credentials never come from the destination string: only from opts.s3.credentials or the AWS chain.
 */
export async function openStore(destination: string | StoreDestination, opts: OpenStoreOptions = {}): Promise<ObjectStore> {
  const dest = typeof destination === 'string' ? parseStoreDestination(destination, opts.cwd ?? process.cwd()) : destination;
  if (dest.kind === 'local') return new LocalStore(dest.path, { logger: opts.logger, ...opts.local });
  const s3 = opts.s3 ?? {};
  // The AWS SDK loads only for an S3 destination: it costs a local run a large part of its start-up.
  const { S3Store } = await import('./s3.js');
  return new S3Store({
    ...opts.s3Tuning,
    bucket: dest.bucket,
    prefix: dest.prefix,
    endpoint: s3.endpoint ?? undefined,
    region: s3.region ?? undefined,
    forcePathStyle: s3.forcePathStyle,
    ...(s3.retryBudgetMs === undefined ? {} : { retryBudgetMs: s3.retryBudgetMs }),
    credentials: s3.credentials,
    logger: opts.logger,
  });
}

export function parseStoreDestination(input: string, cwd: string, platform: NodeJS.Platform = process.platform): StoreDestination {
  const s = input.trim();
  if (s === '') throw new InvalidDestinationError(input, 'is empty');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(s);
  if (!scheme) {
    if (/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s) && !/^[a-zA-Z]:[\\/]/.test(s))
      throw new InvalidDestinationError(input, 'is not a URL or a path');
    const foreign = foreignPathProblem(s, platform);
    if (foreign) throw new InvalidDestinationError(input, foreign);
    return { kind: 'local', path: resolveLocalPath(s, cwd, platform) };
  }
  if (scheme[1]!.toLowerCase() !== 's3') throw new InvalidDestinationError(input, `uses the unsupported scheme "${scheme[1]}://"`);
  const rest = s.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  if (/[@:?#]/.test(bucket)) {
    // Never echo it: it may hold credentials (s3://key:secret@bucket).
    throw new InvalidDestinationError(input, 'must not contain credentials, a port or query parameters', true);
  }
  if (!BUCKET_RE.test(bucket) || bucket.includes('..'))
    throw new InvalidDestinationError(input, `has an invalid bucket name "${bucket}"`, false, bucketNameFix(bucket));
  const prefix = (slash === -1 ? '' : rest.slice(slash + 1)).replace(/\/+$/, '');
  if (/[?#]/.test(prefix)) throw new InvalidDestinationError(input, 'must not contain query parameters');
  if (prefix !== '' && prefix.split('/').some((x) => x === '' || x === '.' || x === '..')) {
    throw new InvalidDestinationError(input, 'has an invalid prefix ("//", "." or ".." segments)');
  }
  return { kind: 's3', bucket, prefix };
}
