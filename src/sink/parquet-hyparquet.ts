import { open, rename, type FileHandle } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { Column, Row } from '../columns/columns.js';
import { parquetColumnTypes } from './column-types.js';
import { ROW_GROUP_BYTES, writeEmptyParquet } from './parquet-duckdb.js';
import { createColumnarConverter, type ParquetValue } from './row-values.js';
import type { Compression } from './sink.js';
import { newStagingBase } from './staging.js';
import { BaseFileWriter } from './writer-base.js';
import { loadZstd, zstdCompress } from './zstd.js';
import { ContentHasher, digestFile, type ContentDigests } from './content-digest.js';

/**
 * Parquet in pure JS with hyparquet-writer. Rows are converted to column arrays as they arrive;
 * each full row group is encoded, compressed and appended to the file at once, so memory is
 * bounded by one row group (plus its encoded bytes), not by the file.
 */

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];
type Compressors = NonNullable<ConstructorParameters<typeof ParquetWriter>[0]['compressors']>;
type Codec = 'ZSTD' | 'SNAPPY' | 'GZIP' | 'UNCOMPRESSED';

/** Encoded bytes per character of buffered values, measured on transaction rows. */
const CHARS_TO_BYTES: Record<Compression, number> = { zstd: 0.45, gzip: 0.46, snappy: 0.8, none: 1 };

const CODEC: Record<Compression, Codec> = { zstd: 'ZSTD', snappy: 'SNAPPY', gzip: 'GZIP', none: 'UNCOMPRESSED' };

/** The same schema DuckDB's COPY writes (see column-types.ts), as hyparquet SchemaElements. */
export function hyparquetSchema(columns: readonly Column[]): SchemaElement[] {
  const leaves: SchemaElement[] = parquetColumnTypes(columns).map((t) => {
    const el: SchemaElement = { name: t.name, type: t.physicalType, repetition_type: t.repetition };
    if (t.convertedType) el.converted_type = t.convertedType;
    if (t.logicalType) el.logical_type = t.logicalType;
    return el;
  });
  return [{ name: 'schema', num_children: leaves.length }, ...leaves];
}

/** hyparquet-writer's ByteWriter that hands each finished row group to the file (hashing it), then reuses its buffer. */
class FileByteWriter extends ByteWriter {
  readonly hasher = new ContentHasher();

  constructor(private readonly fh: FileHandle) {
    super(1 << 20);
  }

  async flush(): Promise<void> {
    this.hasher.update(new Uint8Array(this.buffer, 0, this.index));
    let at = 0;
    while (at < this.index) {
      const { bytesWritten } = await this.fh.write(new Uint8Array(this.buffer, at, this.index - at));
      at += bytesWritten;
    }
    this.index = 0;
  }

  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- ParquetWriter.finish() returns this promise and awaits flushes that return one; its typings say void
  override finish(): Promise<void> {
    return this.flush();
  }
}

export interface HyparquetWriterOptions {
  columns: Column[];
  stagingDir: string;
  compression: Compression;
  rowGroupSize: number;
  /** zstd level (default 3) or gzip level (default 6). */
  compressionLevel?: number | undefined;
}

export class HyparquetParquetWriter extends BaseFileWriter {
  private readonly convert: ReturnType<typeof createColumnarConverter>;
  private readonly pq: ParquetWriter;
  private readonly out: FileByteWriter;
  /** Buffered column arrays of the row group being filled (pages appended as they come). */
  private pending: ParquetValue[][][] = [];
  private pendingRows = 0;
  private pendingChars = 0;
  private closed = false;
  /** The file was written by DuckDB (no rows: see finishFile), not through `out`. */
  private writtenByDuckDB = false;

  private constructor(
    private readonly fh: FileHandle,
    private readonly partPath: string,
    private readonly finalPath: string,
    private readonly opts: HyparquetWriterOptions,
  ) {
    super('.parquet');
    this.track(partPath);
    this.convert = createColumnarConverter(opts.columns);
    this.out = new FileByteWriter(fh);
    const level = opts.compressionLevel;
    const compressors: Compressors = {
      ZSTD: (input) => zstdCompress(input, level ?? 3),
      GZIP: (input) => gzipSync(input, { level: level ?? 6 }),
    };
    this.pq = new ParquetWriter({
      writer: this.out,
      schema: hyparquetSchema(opts.columns),
      codec: CODEC[opts.compression],
      compressors,
      createdBy: 'insight-export (hyparquet-writer)',
    });
  }

  static async create(opts: HyparquetWriterOptions): Promise<HyparquetParquetWriter> {
    if (opts.compression === 'zstd') await loadZstd();
    const base = await newStagingBase(opts.stagingDir);
    const partPath = `${base}.parquet.part`;
    const fh = await open(partPath, 'wx');
    return new HyparquetParquetWriter(fh, partPath, `${base}.parquet`, opts);
  }

  get approxBytes(): number {
    // Encoded bytes so far plus a guess for the buffered group from its text length.
    return this.out.offset + Math.round(this.pendingChars * CHARS_TO_BYTES[this.opts.compression]);
  }

  protected async writeRows(rows: Row[]): Promise<void> {
    let at = 0;
    while (at < rows.length) {
      const take = Math.min(rows.length - at, this.opts.rowGroupSize - this.pendingRows);
      const page = at === 0 && take === rows.length ? rows : rows.slice(at, at + take);
      const columns = this.convert(page, this.rowCount + at);
      this.pending.push(columns);
      this.pendingRows += take;
      this.pendingChars += approxChars(columns);
      at += take;
      // Wide rows: a row group also ends at ROW_GROUP_BYTES of values (memory, as for DuckDB).
      if (this.pendingRows >= this.opts.rowGroupSize || this.pendingChars >= ROW_GROUP_BYTES) await this.flushRowGroup();
    }
  }

  private async flushRowGroup(): Promise<void> {
    if (this.pendingRows === 0) return;
    const pages = this.pending;
    const columnData = this.opts.columns.map((c, i) => ({
      name: c.name,
      data: pages[0]![i]!.concat(...pages.slice(1).map((p) => p[i]!)),
    }));
    this.pending = [];
    const rows = this.pendingRows;
    this.pendingRows = 0;
    this.pendingChars = 0;
    await this.pq.write({ columnData, rowGroupSize: rows });
  }

  protected async finishFile(): Promise<string> {
    if (this.rowCount === 0) {
      await this.close();
      await writeEmptyParquet(this.opts.columns, this.partPath, this.opts.compression);
      this.writtenByDuckDB = true;
    } else {
      await this.flushRowGroup();
      await this.pq.finish();
      await this.close();
    }
    this.track(this.finalPath);
    await rename(this.partPath, this.finalPath);
    this.untrack(this.partPath);
    return this.finalPath;
  }

  protected override finishedDigests(path: string): Promise<ContentDigests> {
    return this.writtenByDuckDB ? digestFile(path) : Promise.resolve(this.out.hasher.digest());
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close();
  }

  protected async release(): Promise<void> {
    this.pending = [];
    await this.close();
  }
}

/** A cheap size estimate of converted values for approxBytes. */
function approxChars(columns: ParquetValue[][]): number {
  let chars = 0;
  for (const values of columns) {
    for (const v of values) chars += typeof v === 'string' ? v.length : 8;
  }
  return chars;
}
