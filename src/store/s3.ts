import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type PutObjectCommandInput,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { silentLogger, type Logger } from '../log.js';
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
import { joinKey, normalisePrefix, validateKey, validatePrefix } from './keys.js';
import type { ObjectInfo, ObjectStore, PutOptions } from './store.js';
import { hexToBase64, readVerified } from './verified-read.js';

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix inside the bucket ("exports/eth"); leading/trailing slashes are ignored. */
  prefix?: string | undefined;
  /** A non-AWS S3 (radosgw, MinIO ...): path-style addressing and checksums only when required. */
  endpoint?: string | undefined;
  /** Default: the SDK's (AWS_REGION, profile); "us-east-1" when an endpoint is given. */
  region?: string | undefined;
  /** Default: true when an endpoint is given. */
  forcePathStyle?: boolean | undefined;
  /** Default: the AWS default credential chain (environment, profile, SSO, container, instance). */
  credentials?: S3ClientConfig['credentials'];
  logger?: Logger | undefined;
  /** Multipart part size (default 8 MiB, minimum 5 MiB); files up to one part go in one PUT. */
  partSize?: number | undefined;
  /** Parts uploaded at once per file (default 4): memory per upload is about partSize * queueSize. */
  queueSize?: number | undefined;
  /** Keys per ListObjectsV2 page (default 1000, the S3 maximum). */
  listPageSize?: number | undefined;
  /** Attempts per request incl. retries (default 3, the SDK's). */
  maxAttempts?: number | undefined;
  /**
   * How long one operation is tried again, with backoff, while the endpoint is unreachable or
   * answers 5xx after the SDK's own attempts (default 30 s); then StoreUnavailableError.
   */
  retryBudgetMs?: number | undefined;
  /** TCP connect timeout per attempt (default 5 s). */
  connectionTimeoutMs?: number | undefined;
  /** A socket idle for this long fails the attempt (default 60 s). */
  socketTimeoutMs?: number | undefined;
  /**
   * An operation (with its retries) unfinished after this long is logged at warn, naming it, its
   * key and the endpoint, and again at each further interval (default 10 s): a gateway that accepts
   * connections but does not answer otherwise leaves a run silent for minutes.
   */
  stillWaitingMs?: number | undefined;
  /** Conditional puts of files up to this size are read into memory, so retries can resend them (default 64 MiB). */
  conditionalBufferMaxBytes?: number | undefined;
  /** Conditional puts up to this size use one PutObject (default 5 GiB, the S3 limit). */
  singlePutMaxBytes?: number | undefined;
}

const MiB = 1024 * 1024;
const DELETE_BATCH = 1000;
/** User metadata (x-amz-meta-…) naming one conditional write; see putObject. */
const WRITE_ID_META = 'insight-export-write-id';
/** S3's single PUT limit: conditional puts of larger files go multipart (see putFile). */
const MAX_SINGLE_PUT = 5 * 1024 * MiB;
const DEFAULT_RETRY_BUDGET_MS = 30_000;
const DEFAULT_STILL_WAITING_MS = 10_000;
/** Backoff between tries of an operation: doubling from the first wait up to the longest, with jitter. */
const BACKOFF_FIRST_MS = 200;
const BACKOFF_MAX_MS = 5_000;

/**
 * An S3 bucket (+ prefix) as an object store, with @aws-sdk/client-s3 v3.
 *
 * ETags are returned without quotes (as S3 shows them in its XML listings). Conditional writes
 * send If-None-Match: * or If-Match: <etag> with the ETag unquoted, which radosgw needs and AWS
 * accepts. Uploads are atomic (S3 never shows a partial object); a failed multipart upload is
 * aborted. Conditional uploads use one PutObject up to 5 GiB; above that the condition goes on
 * CompleteMultipartUpload, which AWS checks but radosgw (Ceph 16) ignores: there, the object is
 * only checked before the upload starts.
 */
export class S3Store implements ObjectStore {
  readonly location: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3Client;
  readonly stats = { retries: 0 };
  private readonly log: Logger;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly listPageSize: number;
  private readonly conditionalBufferMaxBytes: number;
  private readonly singlePutMaxBytes: number;
  private readonly retryBudgetMs: number;
  private readonly stillWaitingMs: number;
  /** The endpoint's origin (no credentials, path or query), or "aws" for AWS's own. */
  private readonly endpointOrigin: string;
  private bucketChecked = false;

  constructor(opts: S3StoreOptions) {
    this.bucket = opts.bucket;
    this.prefix = normalisePrefix(opts.prefix);
    this.location = `s3://${this.bucket}${this.prefix ? `/${this.prefix}` : ''}`;
    this.log = (opts.logger ?? silentLogger).child({ store: this.location });
    this.partSize = Math.max(opts.partSize ?? 8 * MiB, 5 * MiB);
    this.queueSize = opts.queueSize ?? 4;
    this.listPageSize = opts.listPageSize ?? 1000;
    this.conditionalBufferMaxBytes = opts.conditionalBufferMaxBytes ?? 64 * MiB;
    this.singlePutMaxBytes = Math.min(opts.singlePutMaxBytes ?? MAX_SINGLE_PUT, MAX_SINGLE_PUT);
    this.retryBudgetMs = opts.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
    this.stillWaitingMs = opts.stillWaitingMs ?? DEFAULT_STILL_WAITING_MS;
    this.endpointOrigin = endpointOrigin(opts.endpoint);
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
    config.logger = sdkLogger(this.log);
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
    this.client = new S3Client(config);
    addContentMd5ToDeleteObjects(this.client);
    countSdkRetries(this.client, this.stats);
  }

  async putFile(key: string, localPath: string, opts: PutOptions = {}): Promise<{ etag: string }> {
    validateKey(key);
    let size: number;
    try {
      size = (await stat(localPath)).size;
    } catch (err) {
      throw new StoreError(`Local file to upload is missing: ${localPath}`, { details: `key ${key}`, cause: err });
    }
    const conditional = opts.ifNoneMatch !== undefined || opts.ifMatch !== undefined;
    // A file of one part goes in one PUT that carries its digests (Content-MD5, which every S3
    // checks, and x-amz-checksum-sha256, which AWS checks): the store refuses other bytes.
    if ((conditional || opts.digests) && size <= (conditional ? this.conditionalBufferMaxBytes : this.partSize)) {
      const body = await readFile(localPath);
      return this.putObject(key, body, opts);
    }
    if (conditional && size <= this.singlePutMaxBytes) {
      // Streamed single PUT: the condition is checked by the server. A consumed stream cannot be
      // resent, so the SDK does not retry it; each try of this store opens the file again.
      return this.putObject(key, () => createReadStream(localPath), { ...opts, contentLength: size });
    }
    if (conditional) await this.precheck(key, opts);
    return this.retrying('upload', key, () => this.upload(key, localPath, size, opts));
  }

  /**
   * A multipart upload (lib-storage). Its parts are signed with their payload hash, so each is
   * checked on its way; the object as a whole has no digest the store checks, so the bytes read for
   * it are compared with the writer's SHA-256, and a difference aborts the upload before it completes.
   */
  private async upload(key: string, localPath: string, size: number, opts: PutOptions): Promise<{ etag: string }> {
    const started = Date.now();
    const digests = opts.digests;
    const body = digests
      ? readVerified(localPath, digests.sha256, (got) => this.checksumError(key, `SHA-256 written ${digests.sha256}, read ${got}`))
      : createReadStream(localPath);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: this.fullKey(key),
        Body: body,
        ContentLength: size,
        ContentType: opts.contentType,
        IfNoneMatch: opts.ifNoneMatch,
        IfMatch: opts.ifMatch === undefined ? undefined : unquote(opts.ifMatch),
      },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    let etag: string;
    try {
      const out = await upload.done();
      etag = unquote(out.ETag ?? '');
    } catch (err) {
      throw this.mapError(err, 'upload', key, opts);
    }
    // radosgw answers CompleteMultipartUpload with an empty ETag; HeadObject has the real one.
    if (etag === '') etag = (await this.head(key))?.etag ?? '';
    this.log.debug({ op: 'putFile', key, bytes: size, ms: Date.now() - started, multipart: size > this.partSize }, 'uploaded');
    return { etag };
  }

  async put(key: string, body: Buffer | string, opts: PutOptions = {}): Promise<{ etag: string }> {
    validateKey(key);
    const data = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    return this.putObject(key, data, opts);
  }

  async get(key: string): Promise<{ body: Buffer; etag: string } | null> {
    validateKey(key);
    return this.retrying('get', key, async () => {
      try {
        const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
        const bytes = await out.Body!.transformToByteArray();
        return { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), etag: unquote(out.ETag ?? '') };
      } catch (err) {
        if (isNoSuchKey(err)) return null;
        throw this.mapError(err, 'get', key);
      }
    });
  }

  async getStream(key: string): Promise<Readable | null> {
    validateKey(key);
    return this.retrying('get', key, async () => {
      try {
        const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
        return out.Body as Readable;
      } catch (err) {
        if (isNoSuchKey(err)) return null;
        throw this.mapError(err, 'get', key);
      }
    });
  }

  async head(key: string): Promise<ObjectInfo | null> {
    validateKey(key);
    return this.retrying('head', key, () => this.headOnce(key));
  }

  private async headOnce(key: string): Promise<ObjectInfo | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
      return { key, size: out.ContentLength ?? 0, etag: unquote(out.ETag ?? ''), lastModified: out.LastModified };
    } catch (err) {
      if (httpStatus(err) === 404) {
        // HEAD has no body: a missing bucket and a missing key look the same. Tell them apart once.
        await this.checkBucket();
        return null;
      }
      throw this.mapError(err, 'head', key);
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    validatePrefix(prefix);
    const fullPrefix = this.prefix === '' ? prefix : `${this.prefix}/${prefix}`;
    const strip = this.prefix === '' ? 0 : this.prefix.length + 1;
    let token: string | undefined;
    do {
      const continuation = token;
      const out = await this.retrying('list', prefix, async () => {
        try {
          return await this.client.send(
            new ListObjectsV2Command({
              Bucket: this.bucket,
              Prefix: fullPrefix,
              ContinuationToken: continuation,
              MaxKeys: this.listPageSize,
            }),
          );
        } catch (err) {
          throw this.mapError(err, 'list', prefix);
        }
      });
      for (const o of out.Contents ?? []) {
        if (o.Key === undefined) continue;
        yield { key: o.Key.slice(strip), size: o.Size ?? 0, etag: unquote(o.ETag ?? ''), lastModified: o.LastModified };
      }
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(key: string): Promise<void> {
    validateKey(key);
    await this.retrying('delete', key, async () => {
      try {
        await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) }));
      } catch (err) {
        if (isNoSuchKey(err)) return;
        throw this.mapError(err, 'delete', key);
      }
    });
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (const k of keys) validateKey(k);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const out = await this.retrying('delete', batch[0]!, async () => {
        try {
          return await this.client.send(
            new DeleteObjectsCommand({
              Bucket: this.bucket,
              Delete: { Objects: batch.map((k) => ({ Key: this.fullKey(k) })), Quiet: true },
            }),
          );
        } catch (err) {
          throw this.mapError(err, 'delete', batch[0]!);
        }
      });
      const errors = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (errors.length > 0) {
        const first = errors[0]!;
        const sample = errors.slice(0, 5).map((e) => `${e.Key}: ${e.Code} ${e.Message ?? ''}`.trim());
        const params = { details: `${this.location}: ${errors.length} of ${batch.length} keys not deleted`, metaMessages: sample };
        if (first.Code === 'AccessDenied') throw new StoreAccessError(`Not allowed to delete objects in ${this.location}`, params);
        throw new StoreError(`Deleting objects in ${this.location} failed`, params);
      }
    }
  }

  /**
   * Whether the endpoint takes conditional writes, writing nothing: a PUT of `key` (absent) only if
   * it has an ETag it cannot have. An endpoint that knows the condition refuses it (412, or 404 for
   * the absent key); one that does not answers 501 (ConditionalWritesUnsupportedError). One that
   * ignores the header writes the object: it is removed at once and the answer is a warning.
   */
  async checkConditionalWrites(key: string): Promise<void> {
    validateKey(key);
    const ifMatch = 'insight-export-probe-never-an-etag';
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key), Body: '', IfMatch: ifMatch }));
    } catch (err) {
      if (isPreconditionFailed(err) || isNoSuchKey(err)) return;
      throw this.mapError(err, 'put', key, { ifMatch });
    }
    await this.delete(key);
    this.log.warn({ key }, 'the S3 endpoint wrote an object its If-Match should have refused: it may ignore conditional writes');
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  // ---------------------------------------------------------------------------------------------

  private fullKey(key: string): string {
    return joinKey(this.prefix, key);
  }

  /**
   * One PutObject. A conditional put carries a random write id in its metadata: when the server
   * answers 412 to an attempt retried (by the SDK or by `retrying`), an earlier one may have been written and
   * the retry met our own write. Only the write id tells that apart from another writer's object
   * with the same bytes (content alone would turn a lost compare-and-swap into a false success).
   * radosgw answers a conditional PUT that lost a race with 500 (ECANCELED, nothing written); the
   * SDK retries it and the retry gets its 412.
   */
  private async putObject(
    key: string,
    body: Buffer | (() => Readable),
    opts: PutOptions & { contentLength?: number },
  ): Promise<{ etag: string }> {
    const conditional = opts.ifNoneMatch !== undefined || opts.ifMatch !== undefined;
    const writeId = conditional ? randomUUID() : undefined;
    let sent = 0;
    return this.retrying('put', key, async () => {
      const input: PutObjectCommandInput = {
        Bucket: this.bucket,
        Key: this.fullKey(key),
        Body: typeof body === 'function' ? body() : body,
        ContentType: opts.contentType,
        IfNoneMatch: opts.ifNoneMatch,
        IfMatch: opts.ifMatch === undefined ? undefined : unquote(opts.ifMatch),
      };
      if (writeId) input.Metadata = { [WRITE_ID_META]: writeId };
      if (opts.contentLength !== undefined) input.ContentLength = opts.contentLength;
      if (opts.digests) {
        input.ContentMD5 = hexToBase64(opts.digests.md5);
        input.ChecksumSHA256 = hexToBase64(opts.digests.sha256);
      }
      const started = Date.now();
      try {
        const out = await this.client.send(new PutObjectCommand(input));
        this.log.debug({ op: 'put', key, ms: Date.now() - started }, 'put');
        return { etag: unquote(out.ETag ?? '') };
      } catch (err) {
        sent += (err as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1;
        if (writeId && isPreconditionFailed(err) && sent > 1) {
          const current = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.fullKey(key) })).catch(() => null);
          if (current?.Metadata?.[WRITE_ID_META] === writeId) return { etag: unquote(current.ETag ?? '') };
        }
        throw this.mapError(err, 'put', key, opts);
      }
    });
  }

  /**
   * Runs one try of an operation again while the store is unavailable (StoreUnavailableError:
   * connection refused or reset, timeouts, 5xx after the SDK's own attempts), waiting longer each
   * time, until the retry budget is spent; any other error ends it at once.
   */
  private async retrying<T>(op: string, key: string, once: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const waiting = setInterval(() => {
      const waitedS = Math.round((Date.now() - started) / 100) / 10;
      this.log.warn(
        { op, key, endpoint: this.endpointOrigin, waited_s: waitedS, retry_budget_s: this.retryBudgetMs / 1000 },
        'S3 operation still waiting for the endpoint',
      );
    }, this.stillWaitingMs);
    waiting.unref();
    try {
      return await this.tryWithinBudget(op, key, once, started);
    } finally {
      clearInterval(waiting);
    }
  }

  private async tryWithinBudget<T>(op: string, key: string, once: () => Promise<T>, started: number): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await once();
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        const elapsed = Date.now() - started;
        const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (tries - 1)) * (0.5 + Math.random() / 2);
        if (elapsed + wait > this.retryBudgetMs) {
          if (tries === 1) throw err;
          throw new StoreUnavailableError(err.shortMessage, {
            details: `${err.details ?? ''}; tried ${tries} times over ${Math.round(elapsed / 100) / 10} s (s3.retry_budget ${this.retryBudgetMs / 1000} s)`,
            hint: err.hint,
            cause: err.cause,
          });
        }
        if (tries === 1) this.log.warn({ op, key, err: err.shortMessage }, 'S3 unavailable; retrying');
        this.stats.retries++;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private checksumError(key: string, details: string, cause?: unknown): ContentChecksumError {
    return new ContentChecksumError(this.location, key, { metaMessages: [details], cause });
  }

  /** Best-effort check before a conditional multipart upload (see the class comment). */
  private async precheck(key: string, opts: PutOptions): Promise<void> {
    const current = await this.head(key);
    if (opts.ifNoneMatch === '*' && current) throw new PreconditionFailedError(this.location, key, opts);
    if (opts.ifMatch !== undefined && (!current || current.etag !== unquote(opts.ifMatch))) {
      throw new PreconditionFailedError(this.location, key, opts);
    }
  }

  private async checkBucket(): Promise<void> {
    if (this.bucketChecked) return;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      this.bucketChecked = true;
    } catch (err) {
      const status = httpStatus(err);
      if (status === 404) throw new BucketNotFoundError(this.bucket, { details: `${this.location} (HeadBucket: 404)` });
      // HeadBucket needs s3:ListBucket; credentials limited to objects still got a clean 404 for the key.
      if (status === 403) {
        this.bucketChecked = true;
        return;
      }
      throw this.mapError(err, 'head', '');
    }
  }

  /** SDK/network error -> typed store error naming the bucket and key, never the credentials. */
  private mapError(err: unknown, op: string, key: string, cond: PutOptions = {}): Error {
    if (err instanceof InsightExportError) return err;
    const e = err as {
      name?: string;
      code?: string;
      message?: string;
      $metadata?: { httpStatusCode?: number; attempts?: number; requestId?: string };
    };
    const status = e.$metadata?.httpStatusCode;
    const name = e.name ?? 'Error';
    const where = key === '' ? this.location : `${this.location} key ${key}`;
    const attempts = e.$metadata?.attempts;
    const facts = [
      `${op} ${where}`,
      `${name}${status ? ` (HTTP ${status})` : ''}${attempts && attempts > 1 ? ` after ${attempts} attempts` : ''}`,
    ];
    const details = facts.join(': ');

    if (isPreconditionFailed(err)) return new PreconditionFailedError(this.location, key, cond, { cause: err });
    if (DIGEST_ERRORS.has(name)) return this.checksumError(key, details, err);
    if (status === 501 && (cond.ifNoneMatch !== undefined || cond.ifMatch !== undefined)) {
      return new ConditionalWritesUnsupportedError(this.location, {
        details: `${details}${e.message ? ` - ${e.message}` : ''}`,
        cause: err,
      });
    }
    if (name === 'NoSuchBucket') return new BucketNotFoundError(this.bucket, { details, cause: err });
    if (name === 'CredentialsProviderError' || /credential/i.test(name)) {
      return new StoreAccessError(`No S3 credentials found for ${this.location}`, {
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
      return new StoreError(`No AWS region set for ${this.location}`, {
        details,
        hint: 'Set AWS_REGION (or s3.region in the config).',
        cause: err,
      });
    }
    if (name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed' || name === 'IllegalLocationConstraintException') {
      return new StoreError(`Wrong region for ${this.location} (${name})`, {
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

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isNoSuchKey(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'NoSuchKey' || (httpStatus(err) === 404 && name !== 'NoSuchBucket');
}

function isPreconditionFailed(err: unknown): boolean {
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
function endpointOrigin(endpoint: string | undefined): string {
  if (!endpoint) return 'aws';
  try {
    return new URL(endpoint).origin;
  } catch {
    return '(unparsable endpoint)';
  }
}

function unquote(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '');
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
