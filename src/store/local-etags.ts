/**
 * A LocalStore's ETags: the hex MD5 of a file's bytes (what S3 reports for a single-part upload),
 * kept for the files this process wrote or read while their stat is unchanged.
 */
import { createHash } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { isErrno, unlessAbsent } from './errno.js';

export class EtagCache {
  /** MD5s of files this process wrote or read, valid while the file's stat is unchanged. */
  private readonly cache = new Map<string, { sig: string; etag: string }>();

  /** Records the ETag of a file just written. */
  set(file: string, st: Stats, etag: string): void {
    this.cache.set(file, { sig: statSignature(st), etag });
  }

  delete(file: string): void {
    this.cache.delete(file);
  }

  clear(): void {
    this.cache.clear();
  }

  async currentEtag(file: string): Promise<string | null> {
    const st = await unlessAbsent(stat(file), (err) => err as Error);
    if (!st?.isFile()) return null;
    return this.etagOf(file, st);
  }

  /** MD5 of the file, from the cache when the file's stat has not changed since it was hashed. */
  async etagOf(file: string, st: Stats): Promise<string | null> {
    const sig = statSignature(st);
    const cached = this.cache.get(file);
    if (cached && cached.sig === sig) return cached.etag;
    const hash = createHash('md5');
    try {
      await pipeline(createReadStream(file), async function (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) hash.update(chunk);
      });
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return null;
      throw err;
    }
    const etag = hash.digest('hex');
    // Only cache when the file did not change while it was read.
    const after = await stat(file).catch(() => null);
    if (after && statSignature(after) === sig) this.cache.set(file, { sig, etag });
    return etag;
  }
}

function statSignature(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

export function md5(data: Buffer): string {
  return createHash('md5').update(data).digest('hex');
}
