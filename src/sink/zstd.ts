type ZstdWasm = typeof import('@bokuweb/zstd-wasm');

/**
 * ZSTD for the pure-JS Parquet engine. Node 20's zlib has no zstd; @bokuweb/zstd-wasm ships
 * libzstd as wasm inside its npm package (no download at install) and compresses ~4x faster
 * than @hpcc-js/wasm-zstd on Parquet pages. The wasm module is loaded once, on first use.
 */
let ready: Promise<void> | undefined;
let zstd: ZstdWasm | undefined;

export function loadZstd(): Promise<void> {
  ready ??= import('@bokuweb/zstd-wasm')
    .then(async (m) => {
      await m.init();
      zstd = m;
    })
    .catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
  return ready;
}

/** Synchronous, as hyparquet-writer's compressors are; call loadZstd() first. */
export function zstdCompress(input: Uint8Array, level = 3): Uint8Array {
  return loaded().compress(input, level);
}

/** Synchronous, as hyparquet's decompressors are; call loadZstd() first. */
export function zstdDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  return loaded().decompress(input, { defaultHeapSize: Math.max(outputLength, 1024) });
}

function loaded(): ZstdWasm {
  if (!zstd) throw new Error('zstd used before loadZstd() resolved');
  return zstd;
}
