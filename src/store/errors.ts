import { ExitCode, InsightExportError, UserInputError, type ErrorParameters } from '../errors.js';

/** An object-store operation that failed for a reason none of the classes below names. */
export class StoreError extends InsightExportError {
  override name = 'StoreError';
}

/** The local file a putFile was given is not there (a store of either kind). */
export function uploadFileMissing(localPath: string, key: string, cause: unknown): StoreError {
  return new StoreError(`Local file to upload is missing: ${localPath}`, { details: `key ${key}`, cause });
}

/** A conditional write (ifNoneMatch '*' / ifMatch etag) found the object in another state. */
export class PreconditionFailedError extends StoreError {
  override name = 'PreconditionFailedError';
  readonly key: string;
  constructor(
    location: string,
    key: string,
    condition: { ifNoneMatch?: '*' | undefined; ifMatch?: string | undefined },
    params: ErrorParameters = {},
  ) {
    const what = condition.ifNoneMatch === '*' ? 'already exists' : `no longer has ETag ${condition.ifMatch ?? '?'}`;
    super(`Conditional write refused: ${key} ${what}`, {
      details: `${location} ${key}`,
      hint:
        condition.ifNoneMatch === '*'
          ? 'Another run (or an earlier attempt) created this object first; read it before writing again.'
          : 'Another writer changed the object since it was read; read it again and retry.',
      ...params,
    });
    this.key = key;
  }
}

/** Credentials missing, wrong, expired, or without permission for the bucket/key: exit 2, a person must act. */
export class StoreAccessError extends StoreError {
  override name = 'StoreAccessError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
}

/** The destination's bucket does not exist: exit 2. */
export class BucketNotFoundError extends StoreError {
  override name = 'BucketNotFoundError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
  readonly bucket: string;
  constructor(bucket: string, params: ErrorParameters = {}) {
    super(`S3 bucket ${bucket} does not exist`, {
      hint: 'Check the bucket name in the destination (s3://bucket/prefix), the endpoint and the region, or create the bucket.',
      ...params,
    });
    this.bucket = bucket;
  }
}

/**
 * The store answered a conditional write (If-None-Match / If-Match, which the job's lease and its
 * commits rely on) with 501 Not Implemented: it cannot hold an export safely; exit 2.
 */
export class ConditionalWritesUnsupportedError extends StoreError {
  override name = 'ConditionalWritesUnsupportedError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
  constructor(location: string, params: ErrorParameters = {}) {
    super(`The S3 endpoint of ${location} does not support conditional writes`, {
      hint: 'insight-export needs conditional PUTs (If-None-Match: *, If-Match) for its lease and commits, which AWS S3 and Ceph radosgw support: export to such an endpoint, or to a local directory and copy the files over.',
      ...params,
    });
  }
}

/** The store could not be reached or kept failing (connection refused, timeouts, 5xx) after retries. */
export class StoreUnavailableError extends StoreError {
  override name = 'StoreUnavailableError';
}

/**
 * The store refused to keep a data file because the bytes it received are not those its writer
 * hashed (S3: BadDigest to Content-MD5, or a checksum mismatch; a local folder: the MD5 of its
 * copy; a multipart upload: the SHA-256 of the bytes read for it). Nothing is kept under the key;
 * the window is not committed and the next run exports it again: exit 1.
 */
export class ContentChecksumError extends StoreError {
  override name = 'ContentChecksumError';
  constructor(location: string, key: string, params: ErrorParameters = {}) {
    super(`The upload of ${key} was refused: its bytes differ from those written`, {
      details: `${location} ${key}`,
      hint: 'The staged file changed between its writing and its upload (disk or memory fault), or the bytes were altered on the way: the window was not committed and the next run exports it again. If it recurs, check the staging disk (staging_dir) and the network path to the store.',
      ...params,
    });
  }
}

/** A local destination that cannot be a folder (a file on its path, no permission, read-only). */
export class DestinationUnusableError extends UserInputError {
  override name = 'DestinationUnusableError';
}

/** A key the store refuses: empty, absolute, with "..", "." or empty segments, backslashes, NUL. */
export class InvalidKeyError extends UserInputError {
  override name = 'InvalidKeyError';
  readonly key: string;
  constructor(key: string, problem: string) {
    super(`Invalid object key ${JSON.stringify(key)}: ${problem}`, {
      hint: 'Keys are relative paths with forward slashes, e.g. "transactions/chain_id=1/part-0.parquet".',
    });
    this.key = key;
  }
}

/** A destination that is neither "s3://bucket/prefix" nor a local path. */
export class InvalidDestinationError extends UserInputError {
  override name = 'InvalidDestinationError';
  /** What is wrong, e.g. 'has an invalid bucket name "X"'. */
  readonly problem: string;
  /** The destination may hold credentials: it is not repeated in the message. */
  readonly mayHoldSecret: boolean;
  /** What to write instead, when the problem has a more precise answer than the destination's form. */
  readonly fix: string | undefined;
  constructor(destination: string, problem: string, mayHoldSecret = false, fix?: string) {
    super(`Destination ${mayHoldSecret ? 's3://…' : destination} ${problem}`, {
      hint: fix ?? 'Write "s3://bucket/prefix" or a local directory like "./out"; S3 credentials come from the environment.',
    });
    this.problem = problem;
    this.mayHoldSecret = mayHoldSecret;
    this.fix = fix;
  }
}
