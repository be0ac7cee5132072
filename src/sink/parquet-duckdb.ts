import { rename, rm } from 'node:fs/promises';
import pLimit from 'p-limit';
import type { Column, Row } from '../columns/columns.js';
import { errorMessage } from '../errors.js';
import { duckdbType } from './column-types.js';
import { DuckDBThread, type DuckDBStatement } from './duckdb-thread.js';
import { FileWriteError, FileWriterStateError } from './errors.js';
import { ICEBERG_DATA_EXTENSION } from './formats.js';
import { icebergType } from '../iceberg/table-schema.js';
import { createNdjsonEncoder } from './row-values.js';
import type { Compression } from './sink.js';
import { newStagingBase, TextFileStream } from './staging.js';
import { BaseFileWriter } from './writer-base.js';

/**
 * Parquet through DuckDB: rows are staged as plain NDJSON while they arrive (cheap, streamed,
 * memory-flat), then finish() has DuckDB's C++ JSON reader and Parquet writer convert the file
 * in one COPY. Columns are declared explicitly so nothing is auto-detected (a uint256 string
 * stays VARCHAR). One DuckDB instance per process, on its own thread (duckdb-thread.ts).
 */

export interface DuckDBSettings {
  /**
   * DuckDB's threads. One converts as fast as two (the JSON scan of one file is serial); more
   * run tasks on DuckDB's own threads too, each keeping its share of memory (duckdb-thread.ts).
   */
  threads: number;
  /** DuckDB memory_limit for the process, e.g. "512MB". */
  memoryLimit: string;
}

let settings: DuckDBSettings = { threads: 1, memoryLimit: '512MB' };
let thread: DuckDBThread | undefined;
// Conversions wait here, one at a time as the DuckDB thread runs them, so that a writer aborted
// while it waits never reaches DuckDB.
const conversionSlot = pLimit(1);

/** Change the process-wide DuckDB settings; only before the first Parquet file is converted. */
export function configureDuckDB(next: Partial<DuckDBSettings>): void {
  if (thread) throw new Error('configureDuckDB() must be called before the first DuckDB Parquet writer');
  settings = { ...settings, ...next };
}

/** Sends a statement to the DuckDB thread, started on first use: a run that writes no Parquet file does not pay for it. */
function runStatement(sql: string): DuckDBStatement {
  thread ??= new DuckDBThread({
    config: {
      threads: String(settings.threads),
      memory_limit: settings.memoryLimit,
      // Row order is the export's sort order: keep it.
      preserve_insertion_order: 'true',
      // The COPY streams; it never needs to spill, and must not litter the working directory.
      max_temp_directory_size: '0KiB',
    },
  });
  return thread.run(sql);
}

/** Close the DuckDB thread (tests, orderly shutdown). A later writer starts a new one. */
export async function closeDuckDB(): Promise<void> {
  const current = thread;
  thread = undefined;
  await current?.close();
}

export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

export function sqlIdentifier(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

const DUCKDB_CODEC: Record<Compression, string> = { zstd: 'zstd', snappy: 'snappy', gzip: 'gzip', none: 'uncompressed' };

/** The COPY statement that turns the staged NDJSON into the Parquet file. */
export function copyStatement(
  columns: readonly Column[],
  stagedPath: string,
  outPath: string,
  compression: Compression,
  rowGroupSize: number,
  zstdLevel?: number,
  fieldIds?: ReadonlyMap<string, number>,
): string {
  const declared = columns.map((c) => `${sqlString(c.name)}: ${sqlString(duckdbType(c))}`).join(', ');
  const select = columns.map((c) => `CAST(${sqlIdentifier(c.name)} AS ${duckdbType(c)}) AS ${sqlIdentifier(c.name)}`).join(', ');
  return (
    `COPY (SELECT ${select} FROM read_json(${sqlString(stagedPath)}, format = 'newline_delimited', ` +
    `columns = {${declared}}, maximum_object_size = ${MAX_OBJECT_BYTES})) ` +
    `TO ${sqlString(outPath)} (FORMAT parquet, COMPRESSION ${DUCKDB_CODEC[compression]}, ROW_GROUP_SIZE ${rowGroupSize}` +
    `${zstdLevel === undefined ? '' : `, COMPRESSION_LEVEL ${zstdLevel}`}${fieldIds ? icebergOptions(columns, fieldIds) : ''})`
  );
}

/**
 * An Iceberg data file's columns carry the table's field id of their name (FIELD_IDS, which
 * pyarrow, Spark, Trino read) and the footer the file's Iceberg schema (`iceberg.schema`, as
 * Iceberg's own Parquet writer puts it, by which icebird maps columns): a reader of a table whose
 * schema evolved finds each column by id, and none in an older file that lacks it.
 */
function icebergOptions(columns: readonly Column[], fieldIds: ReadonlyMap<string, number>): string {
  // Every column has one: createFileWriter checks.
  return icebergCopyOptions(columns.map((c) => ({ name: c.name, id: fieldIds.get(c.name)!, type: icebergType(c.type) })));
}

/** COPY's FIELD_IDS and KV_METADATA options of an Iceberg data file holding `fields` (Iceberg types). */
export function icebergCopyOptions(fields: readonly { name: string; id: number; type: string }[]): string {
  const schema = { type: 'struct', fields: fields.map((f) => ({ id: f.id, name: f.name, required: false, type: f.type })) };
  return (
    `, FIELD_IDS {${fields.map((f) => `${sqlIdentifier(f.name)}: ${f.id}`).join(', ')}}` +
    `, KV_METADATA {"iceberg.schema": ${sqlString(JSON.stringify(schema))}}`
  );
}

/**
 * A Parquet file with the schema and no rows. Used by the hyparquet engine too: hyparquet-writer
 * 0.17 writes the empty row_groups list with element type BYTE, which arrow-rs rejects.
 */
export async function writeEmptyParquet(columns: readonly Column[], outPath: string, compression: Compression): Promise<void> {
  const select = columns.map((c) => `CAST(NULL AS ${duckdbType(c)}) AS ${sqlIdentifier(c.name)}`).join(', ');
  await conversionSlot(
    () =>
      runStatement(
        `COPY (SELECT ${select} WHERE false) TO ${sqlString(outPath)} (FORMAT parquet, COMPRESSION ${DUCKDB_CODEC[compression]})`,
      ).done,
  );
}

/**
 * Staged NDJSON bytes per row group at most. DuckDB holds a whole row group while it writes it,
 * about 6x its NDJSON size (bench: 50k transaction rows of ~2 KB took +425 MB of RSS, 10k rows
 * +130 MB): a row count alone lets wide rows take the process past its memory budget. 8 MB
 * (~4k transaction rows): exporter peak RSS 475 -> 415 MB against 16 MB, files 1% larger; 4 MB
 * saved little more and made files 5% larger.
 */
export const ROW_GROUP_BYTES = 8 * 1024 * 1024;

/**
 * maximum_object_size of the staged NDJSON. DuckDB's JSON reader sizes its buffers by it (bench:
 * 64 MB cost 60 MB more RSS than 16 MB); DuckDB 1.5 still reads longer lines (a test stages a
 * 24 MB row), so this only sets the buffers.
 */
const MAX_OBJECT_BYTES = 16 * 1024 * 1024;

/** Rows per row group: the configured count, fewer when the rows are wide (at least 1024). */
export function rowGroupRows(configured: number, stagedBytes: number, rows: number): number {
  if (rows === 0 || stagedBytes === 0) return configured;
  const byBytes = Math.floor(ROW_GROUP_BYTES / (stagedBytes / rows));
  return Math.max(1, Math.min(configured, Math.max(1024, byBytes)));
}

/** Parquet bytes per staged NDJSON byte, measured on transaction rows (bench/experiments/sink-throughput.ts). */
const SIZE_RATIO: Record<Compression, number> = { zstd: 0.3, gzip: 0.32, snappy: 0.54, none: 0.66 };

export interface DuckDBParquetWriterOptions {
  columns: Column[];
  stagingDir: string;
  compression: Compression;
  rowGroupSize: number;
  /** zstd level (DuckDB's default is 3). */
  compressionLevel?: number | undefined;
  /** An Iceberg data file: the table's field id of each column, by name (src/iceberg/field-ids.ts). */
  fieldIds?: ReadonlyMap<string, number> | undefined;
}

export class DuckDBParquetWriter extends BaseFileWriter {
  private readonly encode: ReturnType<typeof createNdjsonEncoder>;
  private conversion: DuckDBStatement | undefined;

  private constructor(
    private readonly staged: TextFileStream,
    private readonly base: string,
    private readonly opts: DuckDBParquetWriterOptions,
  ) {
    super(opts.fieldIds ? ICEBERG_DATA_EXTENSION : '.parquet');
    this.encode = createNdjsonEncoder(opts.columns);
    this.track(staged.path);
  }

  static async create(opts: DuckDBParquetWriterOptions): Promise<DuckDBParquetWriter> {
    const base = await newStagingBase(opts.stagingDir);
    return new DuckDBParquetWriter(new TextFileStream(`${base}.staged.ndjson`), base, opts);
  }

  get approxBytes(): number {
    return Math.round(this.staged.approxBytes * SIZE_RATIO[this.opts.compression]);
  }

  protected async writeRows(rows: Row[]): Promise<void> {
    await this.staged.write(this.encode(rows, this.rowCount));
  }

  protected async finishFile(): Promise<string> {
    await this.staged.end();
    const partPath = this.track(`${this.base}.parquet.part`);
    const finalPath = this.track(`${this.base}.parquet`);
    const groupRows = rowGroupRows(this.opts.rowGroupSize, this.staged.bytesWritten, this.rowCount);
    const sql = copyStatement(
      this.opts.columns,
      this.staged.path,
      partPath,
      this.opts.compression,
      groupRows,
      this.opts.compressionLevel,
      this.opts.fieldIds,
    );
    try {
      await conversionSlot(async () => {
        if (this.isAborted) throw new FileWriterStateError('The file writer was aborted before its conversion started');
        this.conversion = runStatement(sql);
        await this.conversion.done;
      });
    } catch (err) {
      if (err instanceof FileWriterStateError) throw err;
      throw new FileWriteError('DuckDB could not convert the staged rows to Parquet', {
        details: `${errorMessage(err)} (staged file ${this.staged.path}, ${this.rowCount} rows)`,
        hint: 'A DuckDB out-of-memory error means memory_limit is too low for the row groups: lower rowGroupSize or raise memoryLimit with configureDuckDB().',
        cause: err,
      });
    }
    await rename(partPath, finalPath);
    this.untrack(partPath);
    await this.removeStaged();
    return finalPath;
  }

  private async removeStaged(): Promise<void> {
    await rm(this.staged.path, { force: true });
    this.untrack(this.staged.path);
  }

  protected override interrupt(): void {
    this.conversion?.interrupt();
  }

  protected async release(): Promise<void> {
    await this.staged.destroy();
    this.conversion = undefined;
  }
}
