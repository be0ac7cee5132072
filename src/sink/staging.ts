import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { makeStagingDir } from './staging-dir.js';
import { once } from 'node:events';
import { join } from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { createGzip, type ZlibOptions } from 'node:zlib';
import { HashingWriteStream, type ContentDigests } from './content-digest.js';

/**
 * Files of the writers: every name starts with STAGING_PREFIX and lives directly in the
 * staging directory, so a crashed run's leftovers are easy to recognise and sweep.
 */
export const STAGING_PREFIX = 'insight-export-';

/** A fresh base path `<stagingDir>/insight-export-<uuid>`; writers add their suffixes to it. */
export async function newStagingBase(stagingDir: string): Promise<string> {
  await makeStagingDir(stagingDir);
  return join(stagingDir, `${STAGING_PREFIX}${randomUUID()}`);
}

export async function removeFiles(paths: Iterable<string>): Promise<void> {
  await Promise.all([...paths].map((p) => rm(p, { force: true })));
}

/**
 * A local file written as a stream of text chunks, optionally gzip-compressed on the way
 * (zlib runs on the libuv thread pool, beside the main thread). write() resolves once the
 * stream has room again: callers that await every write cannot outrun the disk or gzip.
 */
export class TextFileStream {
  private readonly file: WriteStream;
  private readonly head: Writable;
  private readonly done: Promise<void>;
  private failure: unknown;

  /** `hashed`: the file's bytes are hashed as they are written (digests()). */
  constructor(
    readonly path: string,
    gzipLevel?: number,
    hashed = false,
  ) {
    // 'wx': never clobber a file we did not create.
    // A few MB of buffer let the next page be encoded while gzip/the disk work on this one.
    const options = { flags: 'wx', highWaterMark: 4 << 20 };
    this.file = hashed ? new HashingWriteStream(path, options) : createWriteStream(path, options);
    if (gzipLevel === undefined) {
      this.head = this.file;
      this.done = finished(this.file);
    } else {
      // zlib streams pass highWaterMark on to their Transform (the typings omit it).
      const gzip = createGzip({ level: gzipLevel, chunkSize: 256 * 1024, highWaterMark: 4 << 20 } as ZlibOptions);
      this.head = gzip;
      this.done = pipeline(gzip, this.file);
    }
    this.done.catch((err: unknown) => {
      this.failure ??= err;
    });
  }

  /** Bytes that reached the file so far plus those waiting to be written (uncompressed if gzip). */
  get approxBytes(): number {
    return this.file.bytesWritten + this.file.writableLength;
  }

  /** The digests of the file's bytes, once end() resolved; null unless the stream was made `hashed`. */
  digests(): ContentDigests | null {
    return this.file instanceof HashingWriteStream ? this.file.hasher.digest() : null;
  }

  /** Bytes in the file (exact once end() resolved). */
  get bytesWritten(): number {
    return this.file.bytesWritten;
  }

  async write(chunk: string): Promise<void> {
    if (this.failure !== undefined) throw this.failure as unknown;
    if (!this.head.write(chunk)) {
      // 'drain', or the stream failing (once() rejects on 'error'; done rejects on destroy).
      await Promise.race([once(this.head, 'drain'), this.done]);
    }
    if (this.failure !== undefined) throw this.failure as unknown;
  }

  /** Flushes everything and closes the file. */
  async end(): Promise<void> {
    if (this.failure !== undefined) throw this.failure as unknown;
    this.head.end();
    await this.done;
    if (!this.file.closed) await once(this.file, 'close');
  }

  /** Stops writing and closes the file descriptor (the caller removes the file). */
  async destroy(): Promise<void> {
    if (this.head !== this.file) this.head.destroy();
    this.file.destroy();
    await this.done.catch(() => undefined);
    if (!this.file.closed) await once(this.file, 'close').catch(() => undefined);
  }
}
