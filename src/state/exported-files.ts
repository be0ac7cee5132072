/**
 * Reading back what a run exported (verify, the reorganisation check): the rows of a data file,
 * only the columns asked for, from NDJSON (plain or gzip) or Parquet (any codec the sink writes).
 * The store has no ranged reads, so a Parquet file streams to a temporary copy first.
 */
import type { Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gunzipSync } from 'node:zlib';
import type { ObjectStore } from '../store/store.js';
import { ExportedFileError } from './errors.js';

/**
 * hyparquet and the codecs the sink writes besides snappy (hyparquet's own), loaded on first use:
 * a run reads files back only after a reorganisation.
 */
export async function parquetReader() {
  const [hyparquet, zstd] = await Promise.all([import('hyparquet'), import('../sink/zstd.js')]);
  await zstd.loadZstd();
  const compressors = {
    ZSTD: zstd.zstdDecompress,
    GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
  };
  return { ...hyparquet, compressors };
}

/** Largest Parquet footer kept while a file streams through (the metadata of big files is ~100 KB). */
const MAX_FOOTER = 16 * 1024 * 1024;

type FileKind = 'parquet' | 'ndjson.gz' | 'ndjson';

function kindOf(key: string): FileKind | null {
  if (key.endsWith('.parquet')) return 'parquet';
  if (key.endsWith('.ndjson.gz')) return 'ndjson.gz';
  if (key.endsWith('.ndjson') || key.endsWith('.jsonl')) return 'ndjson';
  return null;
}

/** `hash`: fed every byte of the stored file as it is read (what `verify --content` compares). */
async function openFile(store: ObjectStore, key: string, hash?: Hash): Promise<{ kind: FileKind; stream: Readable }> {
  const kind = kindOf(key);
  if (!kind) throw new ExportedFileError(key, 'unknown file type');
  let stream = await store.getStream(key);
  if (!stream) throw new ExportedFileError(key, 'file disappeared');
  if (hash) stream = stream.pipe(hashing(hash));
  return { kind, stream: kind === 'ndjson.gz' ? (stream.pipe(createGunzip()) as Readable) : stream };
}

function hashing(hash: Hash): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      cb(null, chunk);
    },
  });
}

/** Every byte of a stored file through `hash` (a read for its content only). */
export async function hashStoredFile(store: ObjectStore, key: string, hash: Hash): Promise<void> {
  const stream = await store.getStream(key);
  if (!stream) throw new ExportedFileError(key, 'file disappeared');
  for await (const chunk of stream as AsyncIterable<Buffer>) hash.update(chunk);
}

/** Rows of an exported file, read from the file: Parquet footer num_rows, or NDJSON lines. */
export async function countRows(store: ObjectStore, key: string): Promise<number> {
  const { kind, stream } = await openFile(store, key);
  return kind === 'parquet' ? parquetRows(stream, key) : countLines(stream);
}

/**
 * Every row of an exported file, in file order, with only `columns` (a column a row lacks is
 * undefined); `hash` is fed the file's bytes on the way.
 */
export async function readColumns<C extends string>(
  store: ObjectStore,
  key: string,
  columns: readonly C[],
  hash?: Hash,
): Promise<Record<C, unknown>[]> {
  const { kind, stream } = await openFile(store, key, hash);
  return kind === 'parquet' ? parquetColumns(stream, columns) : ndjsonColumns(stream, columns);
}

/** The item_id of every row of an exported file, in file order (its length is the file's row count); `hash` as readColumns. */
export async function readItemIds(store: ObjectStore, key: string, hash?: Hash): Promise<string[]> {
  const rows = await readColumns(store, key, ['item_id'], hash);
  return rows.map((r, i) => {
    if (typeof r.item_id !== 'string') throw new ExportedFileError(key, `row ${i + 1} has no item_id`);
    return r.item_id;
  });
}

async function ndjsonColumns<C extends string>(stream: Readable, columns: readonly C[]): Promise<Record<C, unknown>[]> {
  const rows: Record<C, unknown>[] = [];
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    if (line === '') continue;
    const row = JSON.parse(line) as Record<string, unknown>;
    rows.push(Object.fromEntries(columns.map((c) => [c, row[c]])) as Record<C, unknown>);
  }
  return rows;
}

async function parquetColumns<C extends string>(stream: Readable, columns: readonly C[]): Promise<Record<C, unknown>[]> {
  const dir = await mkdtemp(join(tmpdir(), 'insight-read-'));
  const path = join(dir, 'file.parquet');
  try {
    await pipeline(stream, createWriteStream(path));
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const file = {
        byteLength: size,
        async slice(start: number, end?: number): Promise<ArrayBuffer> {
          const length = (end ?? size) - start;
          const buf = Buffer.alloc(length);
          await handle.read(buf, 0, length, start);
          return buf.buffer.slice(buf.byteOffset, buf.byteOffset + length) as ArrayBuffer;
        },
      };
      const { parquetReadObjects, compressors } = await parquetReader();
      return (await parquetReadObjects({ file, columns: [...columns], compressors })) as Record<C, unknown>[];
    } finally {
      await handle.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function countLines(stream: Readable): Promise<number> {
  let n = 0;
  let last = 0x0a;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) n++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 0x0a ? n : n + 1;
}

async function parquetRows(stream: Readable, key: string): Promise<number> {
  // Stream the file through and keep only its tail.
  const chunks: Buffer[] = [];
  let kept = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    kept += chunk.length;
    while (chunks.length > 1 && kept - chunks[0]!.length >= MAX_FOOTER) kept -= chunks.shift()!.length;
  }
  const tail = Buffer.concat(chunks);
  if (tail.length < 12 || tail.subarray(-4).toString('latin1') !== 'PAR1')
    throw new ExportedFileError(key, 'not a Parquet file (no PAR1 footer)');
  const metaLength = tail.readUInt32LE(tail.length - 8);
  if (metaLength + 8 > tail.length) {
    throw new ExportedFileError(key, `Parquet footer of ${metaLength} bytes is larger than ${MAX_FOOTER}`);
  }
  const { parquetMetadata } = await import('hyparquet');
  const meta = parquetMetadata(new Uint8Array(tail.subarray(tail.length - 8 - metaLength)));
  return Number(meta.num_rows);
}

/** What the rows of some exported files say of their blocks (readBlockHashes). */
export interface BlockHashesOfRows {
  /** block_number → the block_hash its rows carry (and the first file seen with it). */
  hashes: Map<number, { hash: string; key: string }>;
  /** Blocks whose rows carry two different hashes. */
  conflicts: { block: number; hashes: [string, string]; key: string }[];
  /** Files that could not be read (gone, or not a readable data file). */
  unreadable: { key: string; message: string }[];
}

/**
 * The block hash of every block the rows of `keys` lie in. Rows without both columns (a dataset
 * without them) are left out.
 */
export async function readBlockHashes(store: ObjectStore, keys: readonly string[]): Promise<BlockHashesOfRows> {
  const out: BlockHashesOfRows = { hashes: new Map(), conflicts: [], unreadable: [] };
  for (const key of keys) {
    let rows: Record<'block_number' | 'block_hash', unknown>[];
    try {
      rows = await readColumns(store, key, ['block_number', 'block_hash']);
    } catch (err) {
      out.unreadable.push({ key, message: err instanceof Error ? err.message : String(err) });
      continue;
    }
    for (const row of rows) {
      const n = typeof row.block_number === 'bigint' ? Number(row.block_number) : row.block_number;
      if (typeof n !== 'number' || typeof row.block_hash !== 'string') continue;
      const prior = out.hashes.get(n);
      if (!prior) out.hashes.set(n, { hash: row.block_hash, key });
      else if (prior.hash !== row.block_hash) out.conflicts.push({ block: n, hashes: [prior.hash, row.block_hash], key });
    }
  }
  return out;
}
