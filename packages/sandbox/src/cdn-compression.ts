/**
 * Compression as a CDN in front of the service applies it (CloudFront's rules): a body of at
 * least 1,000 bytes is sent in brotli when the request accepts it, else gzip, else as it is.
 * Levels are the on-the-fly ones CDNs use for dynamic content: brotli quality 4, gzip level 6.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { zlibChunkSize } from '../../../src/shared-with-sandbox.js';

export type CdnEncoding = 'br' | 'gzip';

/** Smallest body a CDN compresses. */
export const MIN_COMPRESSED_BYTES = 1_000;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** The encoding a CDN answers a request with this Accept-Encoding in (q=0 means "not this"). */
export function cdnEncoding(acceptEncoding: string | string[] | undefined, bodyBytes: number): CdnEncoding | undefined {
  if (acceptEncoding === undefined || bodyBytes < MIN_COMPRESSED_BYTES) return undefined;
  const accepted = new Set<string>();
  for (const part of (Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name && (q === undefined || Number(q) > 0)) accepted.add(name);
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip') || accepted.has('*')) return 'gzip';
  return undefined;
}

/** The body in that encoding (zlib's thread pool does the work). */
export function cdnCompress(body: Buffer, encoding: CdnEncoding): Promise<Buffer> {
  // JSON compresses ~7x: a quarter of the body holds the output in one or two chunks.
  const chunkSize = zlibChunkSize(body.length / 4);
  return encoding === 'br'
    ? brotli(body, { chunkSize, params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
    : gzipAsync(body, { level: 6, chunkSize });
}
