import zlib from 'node:zlib';

type ZstdWasm = typeof import('@bokuweb/zstd-wasm');

/** zlib's zstd (Node >= 22.15; the typings of Node 20 lack it). */
interface ZlibZstd {
  zstdCompressSync(input: Uint8Array, options: { params: Record<number, number> }): Buffer;
  zstdDecompressSync(input: Uint8Array): Buffer;
  constants: { ZSTD_c_compressionLevel: number };
}

/**
 * ZSTD for the pure-JS Parquet engine: zlib's own where the runtime has it (Node >= 22.15, the
 * image's Node 24), else @bokuweb/zstd-wasm, which ships libzstd as wasm inside its npm package (no
 * download at install; ~4x faster than @hpcc-js/wasm-zstd on Parquet pages) for Node 20. The wasm
 * module is loaded once, on first use, and only where zlib has no zstd.
 */
const native = typeof (zlib as unknown as Partial<ZlibZstd>).zstdCompressSync === 'function' ? (zlib as unknown as ZlibZstd) : undefined;

let ready: Promise<void> | undefined;
let zstd: ZstdWasm | undefined;

/** Which implementation compresses and decompresses: 'zlib' (the runtime's) or 'wasm'. */
export const ZSTD_ENGINE: 'zlib' | 'wasm' = native ? 'zlib' : 'wasm';

export function loadZstd(): Promise<void> {
  if (native) return Promise.resolve();
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
  if (native) return native.zstdCompressSync(input, { params: { [native.constants.ZSTD_c_compressionLevel]: level } });
  return loaded().compress(input, level);
}

/** Synchronous, as hyparquet's decompressors are; call loadZstd() first. */
export function zstdDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  if (native) return native.zstdDecompressSync(input);
  return loaded().decompress(input, { defaultHeapSize: Math.max(outputLength, 1024) });
}

function loaded(): ZstdWasm {
  if (!zstd) throw new Error('zstd used before loadZstd() resolved');
  return zstd;
}
