import { stat } from 'node:fs/promises';
import type { Row } from '../columns/columns.js';
import { errorMessage, InsightExportError } from '../errors.js';
import { FileWriteError, FileWriterStateError } from './errors.js';
import type { FileWriter, FinishedFile } from './sink.js';
import { digestFile, type ContentDigests } from './content-digest.js';
import { removeFiles } from './staging.js';

type WriterState = 'open' | 'finishing' | 'finished' | 'aborted' | 'failed';

/**
 * The life cycle every writer shares: writes run one at a time, any failure removes every file
 * the writer made and leaves it 'failed', abort() waits for work in flight and removes
 * everything (the finished file too), and no method ever leaves a temp file behind.
 */
export abstract class BaseFileWriter implements FileWriter {
  private state: WriterState = 'open';
  private busy: Promise<unknown> = Promise.resolve();
  private readonly files = new Set<string>();
  protected rowCount = 0;

  constructor(protected readonly extension: string) {}

  get rows(): number {
    return this.rowCount;
  }

  protected get isAborted(): boolean {
    return this.state === 'aborted';
  }

  abstract get approxBytes(): number;

  /** Encode and write one page; rowCount is advanced by the caller. */
  protected abstract writeRows(rows: Row[]): Promise<void>;
  /** Produce the final file and return its path. */
  protected abstract finishFile(): Promise<string>;
  /**
   * The digests of the finished file: hashed as it was written where the writer sees its bytes,
   * read back once where a library wrote it (the default).
   */
  protected finishedDigests(path: string): Promise<ContentDigests> {
    return digestFile(path);
  }
  /** Release streams/connections (files are removed by the base class). */
  protected abstract release(): Promise<void>;
  /** Stop long-running work (e.g. interrupt a DuckDB query) so abort() returns soon. */
  protected interrupt(): void {}

  /** Register a path this writer creates, so every failure path removes it. */
  protected track(path: string): string {
    this.files.add(path);
    return path;
  }

  protected untrack(path: string): void {
    this.files.delete(path);
  }

  write(rows: Row[]): Promise<void> {
    return this.serialized('write', async () => {
      if (rows.length === 0) return;
      await this.writeRows(rows);
      this.rowCount += rows.length;
    });
  }

  finish(): Promise<FinishedFile> {
    return this.serialized('finish', async () => {
      this.state = 'finishing';
      const path = await this.finishFile();
      const { size } = await stat(path);
      const digests = await this.finishedDigests(path);
      await this.release();
      this.state = 'finished';
      return { path, rows: this.rowCount, bytes: size, extension: this.extension, ...digests };
    });
  }

  async abort(): Promise<void> {
    if (this.state === 'aborted') return;
    const previous = this.state;
    this.state = 'aborted';
    if (previous === 'open' || previous === 'finishing') this.interrupt();
    await this.busy.catch(() => undefined);
    await this.cleanUp();
  }

  private async cleanUp(): Promise<void> {
    await this.release().catch(() => undefined);
    await removeFiles(this.files);
    this.files.clear();
  }

  private serialized<T>(op: 'write' | 'finish', fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.state !== 'open') {
        throw new FileWriterStateError(`Cannot ${op}: the file writer is ${this.state}`, {
          hint: 'Create a new writer for each file; call write() only before finish() or abort().',
        });
      }
      try {
        return await fn();
      } catch (err) {
        if ((this.state as WriterState) !== 'aborted') {
          this.state = 'failed';
          await this.cleanUp();
        }
        if (err instanceof InsightExportError) throw err;
        throw new FileWriteError(`Writing the ${this.extension} file failed`, {
          details: errorMessage(err),
          hint: 'Check free space and permissions of the staging directory.',
          cause: err,
        });
      }
    };
    const result = this.busy.then(run, run);
    this.busy = result.catch(() => undefined);
    return result;
  }
}
