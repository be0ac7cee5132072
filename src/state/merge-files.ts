/**
 * The merge of one compaction group's files into one file per partition (src/state/compact.ts):
 * Parquet through DuckDB, NDJSON (gzipped or not) as lines concatenated in window order.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { DuckDBInstance } from '@duckdb/node-api';
import { icebergCopyOptions, sqlIdentifier, sqlString } from '../sink/parquet-duckdb.js';
import type { Compression } from '../sink/sink.js';
import { createHashingWriteStream, digestFile, type ContentDigests } from '../sink/content-digest.js';
import type { ObjectStore } from '../store/store.js';
import { CompactionError } from './errors.js';
import type { FileRecord } from './window-record.js';

/** A column of a merged Iceberg data file: its name, field id and Iceberg type. */
export interface MergedField {
  name: string;
  id: number;
  type: string;
}

/**
 * Writes the concatenation of the sources (in window order) to `out`; returns its rows and the
 * digests of its bytes (hashed as written for NDJSON; DuckDB's Parquet read back once). With
 * `fields` (an Iceberg table's): the columns by name, with their field ids, null in the rows of
 * sources written before a column was added.
 */
export async function mergeFiles(
  store: ObjectStore,
  sources: FileRecord[],
  out: string,
  ext: string,
  staging: string,
  duck: DuckDBInstance | null,
  compression: Compression,
  fields: readonly MergedField[] | null,
): Promise<{ rows: number; digests: ContentDigests }> {
  if (ext.endsWith('.parquet')) {
    const locals: string[] = [];
    try {
      for (const [i, f] of sources.entries()) {
        const local = join(staging, `src-${i}.parquet`);
        await download(store, f.key, local);
        locals.push(local);
      }
      const conn = await duck!.connect();
      try {
        const list = locals.map(sqlString).join(', ');
        const codec = compression === 'none' ? 'uncompressed' : compression;
        // Rows keep the order of the files (window order), as the exporter wrote them.
        await conn.run('SET preserve_insertion_order = true');
        const source = `read_parquet([${list}]${fields ? ', union_by_name = true' : ''})`;
        let select = '*';
        let fieldIds = '';
        if (fields) {
          // A column no source has stays out: a reader finds its field id in no file and reads null, as in the sources.
          const present = new Set(
            (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRowObjectsJS().map((r) => String(r.column_name)),
          );
          const kept = fields.filter((f) => present.has(f.name));
          select = kept.map((f) => sqlIdentifier(f.name)).join(', ');
          fieldIds = icebergCopyOptions(kept);
        }
        await conn.run(
          `COPY (SELECT ${select} FROM ${source}) TO ${sqlString(out)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE 50000${fieldIds})`,
        );
        const r = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(out)})`);
        return { rows: Number(r.getRowObjectsJS()[0]!.n), digests: await digestFile(out) };
      } finally {
        conn.closeSync();
      }
    } finally {
      await Promise.all(locals.map((p) => rm(p, { force: true })));
    }
  }
  // NDJSON: lines concatenated in order (gzip: decompressed, then compressed again as one member).
  const gz = ext === '.ndjson.gz';
  let lines = 0;
  const file = createHashingWriteStream(out);
  const gzip = gz ? createGzip({ level: 6 }) : null;
  const output: NodeJS.WritableStream = gzip ?? file;
  const written = gzip ? pipeline(gzip, file) : null;
  const count = async function* (source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      yield chunk;
    }
  };
  try {
    for (const f of sources) {
      const stream = await openSource(store, f.key);
      if (gz) await pipeline(stream, createGunzip(), count, output, { end: false });
      else await pipeline(stream, count, output, { end: false });
    }
  } finally {
    output.end();
    if (written) await written;
    else
      await new Promise<void>((resolve, reject) =>
        file.writableFinished ? resolve() : file.once('finish', resolve).once('error', reject),
      );
  }
  return { rows: lines, digests: file.hasher.digest() };
}

async function openSource(store: ObjectStore, key: string) {
  const stream = await store.getStream(key);
  if (!stream) {
    throw new CompactionError(`A file its window lists is missing: ${key}`, {
      hint: 'Nothing was changed. Run `insight-export verify`; export the window again (run --force) before compacting.',
    });
  }
  return stream;
}

async function download(store: ObjectStore, key: string, path: string): Promise<void> {
  await pipeline(await openSource(store, key), createWriteStream(path));
}
