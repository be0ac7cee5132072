import { compress, decompress, init } from '@bokuweb/zstd-wasm';

/**
 * ZSTD for the pure-JS Parquet engine. Node 20's zlib has no zstd; @bokuweb/zstd-wasm ships
 * libzstd as wasm inside its npm package (no download at install) and compresses ~4x faster
 * than @hpcc-js/wasm-zstd on Parquet pages. The wasm module is loaded once, on first use.
 */
let ready: Promise<void> | undefined;

export function loadZstd(): Promise<void> {
  ready ??= init().catch((err: unknown) => {
    ready = undefined;
    throw err;
  });
  return ready;
}

/** Synchronous, as hyparquet-writer's compressors are; call loadZstd() first. */
export function zstdCompress(input: Uint8Array, level = 3): Uint8Array {
  return compress(input, level);
}

/** Synchronous, as hyparquet's decompressors are; call loadZstd() first. */
export function zstdDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  return decompress(input, { defaultHeapSize: Math.max(outputLength, 1024) });
}
