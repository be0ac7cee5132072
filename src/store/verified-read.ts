/**
 * A local file read for an upload whose whole-object digest cannot be sent as a header (a multipart
 * upload's parts are checked one by one, never the object as written): the bytes read are hashed on
 * their way, and when the last of them differs from what the writer hashed the stream fails before
 * it ends, so the upload is aborted instead of completed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';

/** The file at `path` as a stream that fails with `mismatch()` when its SHA-256 is not `sha256` (hex). */
export function readVerified(path: string, sha256: string, mismatch: (got: string) => Error): Readable {
  const hash = createHash('sha256');
  const check = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      cb(null, chunk);
    },
    flush(cb) {
      const got = hash.digest('hex');
      cb(got === sha256 ? null : mismatch(got));
    },
  });
  const file = createReadStream(path);
  file.on('error', (err) => check.destroy(err));
  return file.pipe(check);
}

/** A hex digest as the base64 S3 headers carry (Content-MD5, x-amz-checksum-sha256). */
export const hexToBase64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');
