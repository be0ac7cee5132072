import type { Readable } from 'node:stream';

/**
 * Where finished files and state live: a local directory or an S3 prefix.
 * Keys are relative to the destination root ("transactions/chain_id=1/date=2024-01-01/x.parquet"),
 * always with forward slashes, never starting with "/" and never containing "..".
 */
export interface ObjectInfo {
  key: string;
  size: number;
  /** Without quotes. LocalStore: hex MD5 of the content; S3: the object's ETag (hex MD5 for single-part uploads). */
  etag: string;
  lastModified?: Date | undefined;
}

export interface PutOptions {
  contentType?: string | undefined;
  /**
   * putFile: hex digests of the file's bytes as its writer produced them. The store keeps the file
   * only if what it received has them (ContentChecksumError otherwise): S3 is sent Content-MD5 and
   * x-amz-checksum-sha256 (see S3Store.putFile), a local folder compares the MD5 of its copy.
   */
  digests?: { sha256: string; md5: string } | undefined;
  /** "*" = create only if absent (S3 If-None-Match: *). Fails with PreconditionFailedError. */
  ifNoneMatch?: '*' | undefined;
  /** Replace only if the current ETag equals this. Fails with PreconditionFailedError. */
  ifMatch?: string | undefined;
}

export interface ListOptions {
  /**
   * false: the caller reads no ETag of the listing, so a store that has to compute them (local:
   * the MD5 of every file) leaves them empty. Default true.
   */
  etags?: boolean;
}

export interface ObjectStore {
  /** Human-readable location, e.g. "s3://bucket/prefix" or "/abs/path"; never contains credentials. */
  readonly location: string;
  /** Upload a finished local file atomically: readers see the whole object or nothing. */
  putFile(key: string, localPath: string, opts?: PutOptions): Promise<{ etag: string }>;
  /** Small objects (state, reports): whole body in memory. */
  put(key: string, body: Buffer | string, opts?: PutOptions): Promise<{ etag: string }>;
  /** null when absent. */
  get(key: string): Promise<{ body: Buffer; etag: string } | null>;
  getStream(key: string): Promise<Readable | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Every object whose key starts with prefix (recursive), in key order. */
  list(prefix: string, opts?: ListOptions): AsyncIterable<ObjectInfo>;
  /** Absent keys are not an error. */
  delete(key: string): Promise<void>;
  deleteMany(keys: string[]): Promise<void>;
  /** Throws when the store cannot do the conditional writes of PutOptions; writes nothing (a dry run's check). Absent: it can. */
  checkConditionalWrites?(key: string): Promise<void>;
  close?(): Promise<void>;
  /** Attempts of store requests that were retries (S3: the SDK's and this store's own); absent where nothing is retried. */
  readonly stats?: { retries: number };
}
