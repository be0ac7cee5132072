/**
 * The digests of a data file's bytes, taken while the file is written: SHA-256, recorded in the
 * state at commit (what `verify --content` and `run --repair` compare), and MD5, sent as
 * Content-MD5 with the upload (the one digest every S3 checks: Ceph radosgw 16 ignores
 * x-amz-checksum-sha256 and refuses a body whose MD5 differs, AWS checks both).
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, WriteStream } from 'node:fs';

/** Hex digests of a file's bytes. */
export interface ContentDigests {
  sha256: string;
  md5: string;
}

/** Both digests of bytes given in order. */
export class ContentHasher {
  private readonly sha256: Hash = createHash('sha256');
  private readonly md5: Hash = createHash('md5');

  update(bytes: Uint8Array): void {
    this.sha256.update(bytes);
    this.md5.update(bytes);
  }

  digest(): ContentDigests {
    return { sha256: this.sha256.digest('hex'), md5: this.md5.digest('hex') };
  }
}

/**
 * The digests of a local file, read once: for files a library writes itself (DuckDB's COPY),
 * whose bytes never pass through this process while they are written.
 */
export async function digestFile(path: string): Promise<ContentDigests> {
  const hasher = new ContentHasher();
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) hasher.update(chunk);
  return hasher.digest();
}

type WriteCallback = (error?: Error | null) => void;

/** fs.WriteStream as Node defines it: its typings give it Writable's constructor, not (path, options). */
const FileWriteStream = WriteStream as unknown as new (path: string, opts: { flags?: string; highWaterMark?: number }) => WriteStream;

/**
 * A file write stream that hashes every byte on its way to the file, in file order (what Node's
 * Writable hands _write and _writev is exactly what reaches the file).
 */
export class HashingWriteStream extends FileWriteStream {
  readonly hasher = new ContentHasher();

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: WriteCallback): void {
    this.hasher.update(chunk);
    super._write(chunk, encoding, callback);
  }

  override _writev(chunks: { chunk: Buffer; encoding: BufferEncoding }[], callback: WriteCallback): void {
    for (const c of chunks) this.hasher.update(c.chunk);
    super._writev!(chunks, callback);
  }
}

/** `createWriteStream` with the bytes hashed as they are written. */
export function createHashingWriteStream(path: string, opts: { flags?: string; highWaterMark?: number } = {}): HashingWriteStream {
  return new HashingWriteStream(path, opts);
}
