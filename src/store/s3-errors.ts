/**
 * What S3 (the SDK, the network, the endpoint) answers, told apart and turned into the store's typed
 * errors (src/store/errors.ts): absent keys, lost conditions, bad digests, access, an endpoint
 * unavailable, a wrong region.
 */
import { InsightExportError } from '../errors.js';
import {
  BucketNotFoundError,
  ContentChecksumError,
  ConditionalWritesUnsupportedError,
  PreconditionFailedError,
  StoreAccessError,
  StoreError,
  StoreUnavailableError,
} from './errors.js';
import type { PutOptions } from './store.js';

/** Where an S3 store writes: its location (s3://bucket/prefix) and bucket, named by its errors. */
export interface S3Place {
  location: string;
  bucket: string;
}

/** SDK/network error -> typed store error naming the bucket and key, never the credentials. */
export function s3StoreError(err: unknown, at: S3Place, op: string, key: string, cond: PutOptions = {}): Error {
  if (err instanceof InsightExportError) return err;
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number; attempts?: number; requestId?: string };
  };
  const status = e.$metadata?.httpStatusCode;
  const name = e.name ?? 'Error';
  const where = key === '' ? at.location : `${at.location} key ${key}`;
  const attempts = e.$metadata?.attempts;
  const facts = [
    `${op} ${where}`,
    `${name}${status ? ` (HTTP ${status})` : ''}${attempts && attempts > 1 ? ` after ${attempts} attempts` : ''}`,
  ];
  const details = facts.join(': ');

  if (isPreconditionFailed(err)) return new PreconditionFailedError(at.location, key, cond, { cause: err });
  if (DIGEST_ERRORS.has(name)) return new ContentChecksumError(at.location, key, { metaMessages: [details], cause: err });
  if (status === 501 && (cond.ifNoneMatch !== undefined || cond.ifMatch !== undefined)) {
    return new ConditionalWritesUnsupportedError(at.location, {
      details: `${details}${e.message ? ` - ${e.message}` : ''}`,
      cause: err,
    });
  }
  if (name === 'NoSuchBucket') return new BucketNotFoundError(at.bucket, { details, cause: err });
  if (name === 'CredentialsProviderError' || /credential/i.test(name)) {
    return new StoreAccessError(`No S3 credentials found for ${at.location}`, {
      details,
      hint: 'Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run where an IAM role is attached).',
      cause: err,
    });
  }
  if (status === 403 || ACCESS_ERRORS.has(name)) {
    const hint =
      name === 'InvalidAccessKeyId'
        ? 'The access key id is unknown to this S3 endpoint: check AWS_ACCESS_KEY_ID (and the endpoint).'
        : name === 'SignatureDoesNotMatch'
          ? 'The secret key does not match the access key id: check AWS_SECRET_ACCESS_KEY.'
          : name === 'ExpiredToken' || name === 'TokenRefreshRequired'
            ? 'The session token expired: refresh the credentials.'
            : 'Check the credentials and that they may read and write this bucket and prefix.';
    return new StoreAccessError(`Access to ${where} denied (${name})`, { details, hint, cause: err });
  }
  if (isUnavailable(err)) {
    return new StoreUnavailableError(`S3 endpoint unavailable while trying to ${op} ${where}`, {
      details: `${details}${e.message ? ` - ${e.message}` : ''}`,
      hint: 'Check that the endpoint (S3_ENDPOINT / AWS_ENDPOINT_URL_S3) is reachable; the run can be repeated, completed windows are kept.',
      cause: err,
    });
  }
  if (/region is missing/i.test(e.message ?? '')) {
    return new StoreError(`No AWS region set for ${at.location}`, {
      details,
      hint: 'Set AWS_REGION (or s3.region in the config).',
      cause: err,
    });
  }
  if (name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed' || name === 'IllegalLocationConstraintException') {
    return new StoreError(`Wrong region for ${at.location} (${name})`, {
      details,
      hint: "Set AWS_REGION to the bucket's region.",
      cause: err,
    });
  }
  return new StoreError(`S3 ${op} failed for ${where}: ${name}`, {
    details: `${details}${e.message ? ` - ${e.message}` : ''}`,
    cause: err,
  });
}

const ACCESS_ERRORS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
  'AccountProblem',
  'InvalidClientTokenId',
]);

/** The store's answers to a body that is not what its digests (Content-MD5, x-amz-checksum-*, the signed payload hash) say. */
const DIGEST_ERRORS = new Set(['BadDigest', 'XAmzContentSHA256Mismatch', 'InvalidChecksum']);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'UND_ERR_SOCKET',
]);

export function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

export function isNoSuchKey(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'NoSuchKey' || (httpStatus(err) === 404 && name !== 'NoSuchBucket');
}

export function isPreconditionFailed(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  const status = httpStatus(err);
  // 409 ConditionalRequestConflict: AWS saw a concurrent conditional write to the same key.
  return name === 'PreconditionFailed' || status === 412 || name === 'ConditionalRequestConflict';
}

function isUnavailable(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  // 501 Not Implemented: the endpoint lacks the operation (or a header it was sent), which no retry changes.
  if (status !== undefined && status >= 500 && status !== 501) return true;
  if (e.code && NETWORK_CODES.has(e.code)) return true;
  return e.name === 'TimeoutError' || e.name === 'RequestTimeout' || e.name === 'SlowDown' || e.name === 'ServiceUnavailable';
}
