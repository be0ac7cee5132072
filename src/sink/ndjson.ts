import { rename } from 'node:fs/promises';
import type { Column, Row } from '../columns/columns.js';
import { createNdjsonEncoder } from './row-values.js';
import { newStagingBase, TextFileStream } from './staging.js';
import { BaseFileWriter } from './writer-base.js';
import type { ContentDigests } from './content-digest.js';

export interface NdjsonWriterOptions {
  columns: Column[];
  stagingDir: string;
  /** gzip level 1-9, or null for plain NDJSON. */
  gzipLevel: number | null;
  extension: string;
}

/**
 * NDJSON (optionally gzip) writer: one JSON object per line, exactly the declared columns in
 * declared order. Streams to `<base><ext>.part` and renames to `<base><ext>` on finish.
 */
export class NdjsonFileWriter extends BaseFileWriter {
  private readonly encode: ReturnType<typeof createNdjsonEncoder>;

  private constructor(
    private readonly stream: TextFileStream,
    private readonly finalPath: string,
    opts: NdjsonWriterOptions,
  ) {
    super(opts.extension);
    this.encode = createNdjsonEncoder(opts.columns);
    this.track(stream.path);
  }

  static async create(opts: NdjsonWriterOptions): Promise<NdjsonFileWriter> {
    const base = await newStagingBase(opts.stagingDir);
    const finalPath = `${base}${opts.extension}`;
    const stream = new TextFileStream(`${finalPath}.part`, opts.gzipLevel ?? undefined, true);
    return new NdjsonFileWriter(stream, finalPath, opts);
  }

  get approxBytes(): number {
    return this.stream.approxBytes;
  }

  protected async writeRows(rows: Row[]): Promise<void> {
    await this.stream.write(this.encode(rows, this.rowCount));
  }

  protected async finishFile(): Promise<string> {
    await this.stream.end();
    this.track(this.finalPath);
    await rename(this.stream.path, this.finalPath);
    this.untrack(this.stream.path);
    return this.finalPath;
  }

  protected override finishedDigests(): Promise<ContentDigests> {
    return Promise.resolve(this.stream.digests()!);
  }

  protected async release(): Promise<void> {
    await this.stream.destroy();
  }
}
