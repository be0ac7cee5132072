import { randomUUID } from 'node:crypto';
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
  type PutObjectCommandInput,
  type S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { silentLogger, type Logger } from '../log.js';
import { checkConditions, isConditional, normaliseEtag as unquote } from './conditional-write.js';
import { BucketNotFoundError, ContentChecksumError, StoreAccessError, StoreError, uploadFileMissing } from './errors.js';
import { joinKey, normalisePrefix, validateKey, validatePrefix } from './keys.js';
import { createS3Client, endpointOrigin } from './s3-client.js';
import { httpStatus, isNoSuchKey, isPreconditionFailed, s3StoreError } from './s3-errors.js';
import { retrying, type RetryBudget } from './s3-retry-budget.js';
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
  /** How long an operation is tried again while the endpoint is unavailable (see retrying). */
  private readonly budget: RetryBudget;
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
    this.budget = {
      retryBudgetMs: opts.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS,
      stillWaitingMs: opts.stillWaitingMs ?? DEFAULT_STILL_WAITING_MS,
      endpointOrigin: endpointOrigin(opts.endpoint),
      log: this.log,
      stats: this.stats,
    };
    this.client = createS3Client(opts, this.log, this.stats);
  }

  async putFile(key: string, localPath: string, opts: PutOptions = {}): Promise<{ etag: string }> {
    validateKey(key);
    let size: number;
    try {
      size = (await stat(localPath)).size;
    } catch (err) {
      throw uploadFileMissing(localPath, key, err);
    }
    const conditional = isConditional(opts);
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
    const conditional = isConditional(opts);
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

  /** One try of an operation, again while the store is unavailable, within the retry budget (src/store/s3-retry-budget.ts). */
  private async retrying<T>(op: string, key: string, once: () => Promise<T>): Promise<T> {
    return retrying(this.budget, op, key, once);
  }

  private checksumError(key: string, details: string, cause?: unknown): ContentChecksumError {
    return new ContentChecksumError(this.location, key, { metaMessages: [details], cause });
  }
  /** Best-effort check before a conditional multipart upload (see the class comment). */
  private async precheck(key: string, opts: PutOptions): Promise<void> {
    const current = await this.head(key);
    checkConditions(this.location, key, current?.etag ?? null, opts);
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
  /** SDK/network error -> typed store error naming the bucket and key, never the credentials (src/store/s3-errors.ts). */
  private mapError(err: unknown, op: string, key: string, cond: PutOptions = {}): Error {
    return s3StoreError(err, this, op, key, cond);
  }
}
