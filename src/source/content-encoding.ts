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
 * zlib's output chunk for an output of about this size, for decoding and encoding alike. Each
 * chunk is a round trip between the thread pool and the main thread: at zlib's default of 16 KiB a
 * 1,000-row page took ~100 of them, and decoding cost two to three times the CPU it does in chunks
 * near the output's size (brotli encoding 2.7x: 41.9 against 15.3 ms for a 1.76 MB page).
 */
export function zlibChunkSize(expectedOutputBytes: number): number {
  return Math.min(2 << 20, Math.max(64 << 10, Math.ceil(expectedOutputBytes)));
}

/** JSON compresses ~7x: a decoded body is at most ~8x its compressed size. */
const decodeChunkSize = (compressedBytes: number) => zlibChunkSize(compressedBytes * 8);

/** Undoes the codings (last applied first). Rejects with zlib's error for a corrupt or cut body. */
export async function decodeBody(body: Buffer, codings: readonly string[]): Promise<Buffer> {
  let out = body;
  for (let i = codings.length - 1; i >= 0; i--) out = await DECODERS.get(codings[i]!)!(out, { chunkSize: decodeChunkSize(out.length) });
  return out;
}
