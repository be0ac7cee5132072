/**
 * Issue 45.9: what the newer runtime gives is used where present, with a fallback. The pure-JS
 * Parquet engine's zstd is zlib's own on Node >= 22.15 (the image's Node 24) and libzstd as wasm on
 * Node 20; either one's frames are read by the other (the files stay the same format). CI runs this
 * file on both runtimes (.ci/run).
 */
import zlib from 'node:zlib';
import { expect, it } from 'vitest';
import * as wasm from '@bokuweb/zstd-wasm';
import { loadZstd, zstdCompress, zstdDecompress, ZSTD_ENGINE } from '../../src/sink/zstd.js';

const runtimeHasZstd = typeof (zlib as unknown as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';
const page = new TextEncoder().encode(Array.from({ length: 2000 }, (_, i) => `row ${i % 97} 0x${(i * 7919).toString(16)}`).join('\n'));

it(`compresses with ${runtimeHasZstd ? "the runtime's zlib" : 'the wasm libzstd (this runtime has no zstd in zlib)'}`, () => {
  expect(ZSTD_ENGINE).toBe(runtimeHasZstd ? 'zlib' : 'wasm');
});

it('its frames are read by the wasm libzstd, and it reads theirs, at the levels a job may give', async () => {
  await loadZstd();
  await wasm.init();
  for (const level of [1, 3, 22]) {
    const ours = zstdCompress(page, level);
    expect(Buffer.from(wasm.decompress(ours, { defaultHeapSize: page.length })).equals(Buffer.from(page))).toBe(true);
    const theirs = wasm.compress(page, level);
    expect(Buffer.from(zstdDecompress(theirs, page.length)).equals(Buffer.from(page))).toBe(true);
  }
});
