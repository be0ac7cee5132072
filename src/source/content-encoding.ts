/**
 * Compressed responses: what the client asks for (Accept-Encoding) and how it reads whatever
 * Content-Encoding comes back. Decoding runs on zlib's thread pool, beside the main thread.
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';

type Decoder = (input: Buffer, options: { chunkSize: number }) => Promise<Buffer>;

// Node >= 22.15 has zstd in zlib; Node 20 does not (the typings of either may lack it).
const zstdDecompress = (
  zlib as unknown as { zstdDecompress?: (b: Buffer, o: { chunkSize: number }, cb: (e: Error | null, r: Buffer) => void) => void }
).zstdDecompress;

/** Decoders by Content-Encoding token; x-gzip is gzip's old name (RFC 9110 8.4.1.3). */
const DECODERS: ReadonlyMap<string, Decoder> = new Map<string, Decoder>([
  ['gzip', promisify(zlib.gunzip)],
  ['x-gzip', promisify(zlib.gunzip)],
  ['deflate', promisify(zlib.inflate)],
  ['br', promisify(zlib.brotliDecompress)],
  ...(zstdDecompress ? ([['zstd', promisify(zstdDecompress)]] as [string, Decoder][]) : []),
]);

/** The Accept-Encoding the client sends: brotli and gzip always, zstd where the runtime decodes it. */
export const ACCEPT_ENCODING = ['br', 'gzip', ...(DECODERS.has('zstd') ? ['zstd'] : [])].join(', ');

/** The encodings this runtime can read, for messages. */
export const DECODABLE_ENCODINGS: readonly string[] = [...DECODERS.keys()];

/**
 * The codings of a Content-Encoding header in the order they were applied ('identity' and empty
 * entries dropped, names lowercased); [] for an uncompressed body.
 */
export function contentCodings(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const text = Array.isArray(header) ? header.join(',') : header;
  return text
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '' && t !== 'identity');
}

/** The first coding this runtime cannot decode, if any. */
export function unsupportedCoding(codings: readonly string[]): string | undefined {
  return codings.find((c) => !DECODERS.has(c));
}

/**
 * zlib's output chunk for a body of this size. Each chunk is a round trip between the thread pool
 * and the main thread: at zlib's default of 16 KiB a 1,000-row page took ~100 of them, and decoding
 * cost two to three times the CPU it does in chunks near the decoded size (JSON compresses ~7x).
 */
function decodeChunkSize(compressedBytes: number): number {
  return Math.min(2 << 20, Math.max(64 << 10, compressedBytes * 8));
}

/** Undoes the codings (last applied first). Rejects with zlib's error for a corrupt or cut body. */
export async function decodeBody(body: Buffer, codings: readonly string[]): Promise<Buffer> {
  let out = body;
  for (let i = codings.length - 1; i >= 0; i--) out = await DECODERS.get(codings[i]!)!(out, { chunkSize: decodeChunkSize(out.length) });
  return out;
}
