import type { Column, Row } from '../columns/columns.js';
import { isoDate } from '../columns/columns.js';
import { fileName } from './file-names.js';
import { renderPartition, type PartitionValues } from './partitioning.js';
import type { FileWriter, FileWriterOptions, FinishedFile } from './sink.js';
import { createFileWriter } from './index.js';

/** How a unit's files are written, laid out and cut: the resolved `output` settings, passed as they are. */
export interface FileOutput extends Pick<FileWriterOptions, 'format' | 'parquetEngine' | 'compression'> {
  /** Validated partitioning template, e.g. "{dataset}/chain_id={chain_id}/date={date}". */
  partitioning: string;
  maxRowsPerFile: number;
  maxBytesPerFile: number;
}

export interface PartitionedWriterOptions {
  output: FileOutput;
  /** Local directory the files are written in. */
  stagingDir: string;
  columns: Column[];
  /** Values fixed for the whole unit (dataset, chain_id, target, job). */
  fixed: PartitionValues;
  /** File name stem, unique per unit window (fileStem). */
  stem: string;
  /** `YYYY-MM-DD` of a row for `{date}`; default: the UTC date of its block_timestamp. */
  dateOf?: ((row: Row) => string) | undefined;
  /** Iceberg: the table's field id of each column, by name. */
  fieldIds?: ReadonlyMap<string, number> | undefined;
}

/** A finished local file and the key it must have at the destination. */
export interface PlannedFile extends FinishedFile {
  key: string;
  partition: string;
}

/**
 * Routes the rows of one unit window into files: one open file at a time (rows arrive sorted, so
 * a partition never reopens), a new file when the partition (date) changes or a file reaches its
 * row or byte cap. File names are `<stem>__<seq>` with a sequence that depends only on the rows, so
 * the same window always produces the same keys.
 */
export class PartitionedWriter {
  private current: { partition: string; writer: FileWriter } | null = null;
  private readonly files: PlannedFile[] = [];
  private seq = 0;
  private readonly usesDate: boolean;
  private fixedPartition: string | undefined;
  /** The UTC day number (or dateOf's date) of the last row routed, and its partition. */
  private lastDay: number | string | undefined;
  private lastPartition = '';

  constructor(private readonly opts: PartitionedWriterOptions) {
    this.usesDate = /\{(date|year|month|day)\}/.test(opts.output.partitioning);
  }

  get rows(): number {
    return this.files.reduce((n, f) => n + f.rows, 0) + (this.current?.writer.rows ?? 0);
  }

  async write(rows: Row[]): Promise<void> {
    let batch: Row[] = [];
    let batchPartition: string | null = null;
    for (const row of rows) {
      const partition = this.partitionOf(row);
      if (partition !== batchPartition && batch.length > 0) {
        await this.writeBatch(batchPartition!, batch);
        batch = [];
      }
      batchPartition = partition;
      batch.push(row);
    }
    if (batch.length > 0) await this.writeBatch(batchPartition!, batch);
  }

  /** Closes the open file; returns every file of the unit in write order. */
  async finish(): Promise<PlannedFile[]> {
    await this.closeCurrent();
    return [...this.files];
  }

  /**
   * Closes the open file; returns every file of the unit in write order, named as the files of
   * another window (`stem`): a run stopped part-way commits the rows of a shorter window, whose
   * files must not share names with those a later export of the whole window writes.
   */
  async finishAs(stem: string): Promise<PlannedFile[]> {
    const files = await this.finish();
    return files.map((f, seq) => {
      const name = fileName(stem, seq, f.extension);
      return { ...f, key: f.partition === '' ? name : `${f.partition}/${name}` };
    });
  }

  async abort(): Promise<void> {
    const current = this.current;
    this.current = null;
    await current?.writer.abort();
  }

  /** The partition of a row. Consecutive rows share their day: the template is rendered once per day. */
  private partitionOf(row: Row): string {
    if (!this.usesDate) return (this.fixedPartition ??= renderPartition(this.opts.output.partitioning, { ...this.opts.fixed }));
    const day = this.opts.dateOf ? this.opts.dateOf(row) : Math.floor((row.block_timestamp as number) / 86_400);
    if (day === this.lastDay) return this.lastPartition;
    const date = typeof day === 'string' ? day : isoDate(row.block_timestamp as number);
    this.lastPartition = renderPartition(this.opts.output.partitioning, { ...this.opts.fixed, date });
    this.lastDay = day;
    return this.lastPartition;
  }

  private async writeBatch(partition: string, rows: Row[]): Promise<void> {
    let offset = 0;
    while (offset < rows.length) {
      if (this.current && this.current.partition !== partition) await this.closeCurrent();
      if (!this.current) {
        const { format, parquetEngine, compression } = this.opts.output;
        this.current = {
          partition,
          writer: await createFileWriter({
            format,
            parquetEngine,
            compression,
            stagingDir: this.opts.stagingDir,
            columns: this.opts.columns,
            fieldIds: this.opts.fieldIds,
          }),
        };
      }
      const writer = this.current.writer;
      const room = this.opts.output.maxRowsPerFile - writer.rows;
      const slice = rows.slice(offset, offset + Math.max(room, 0));
      if (slice.length > 0) await writer.write(slice);
      offset += slice.length;
      if (writer.rows >= this.opts.output.maxRowsPerFile || writer.approxBytes >= this.opts.output.maxBytesPerFile) {
        await this.closeCurrent();
      }
    }
  }

  private async closeCurrent(): Promise<void> {
    const current = this.current;
    if (!current) return;
    this.current = null;
    const finished = await current.writer.finish();
    const name = fileName(this.opts.stem, this.seq++, finished.extension);
    const key = current.partition === '' ? name : `${current.partition}/${name}`;
    this.files.push({ ...finished, key, partition: current.partition });
  }
}
