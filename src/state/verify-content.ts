/**
 * `verify --content` (and `run --repair`, which checks what it repairs the same way): every file a
 * completed window lists is read and its SHA-256 compared with the one recorded when it was written
 * (FileRecord.sha256). A file edited at the same size, or rotted, differs; its window is damaged
 * and exported again by `run --repair`. Files of records written by older versions carry no
 * checksum: they are counted as such, never failed. Without the flag the files are compared by
 * size (and row counts), and the report says so.
 */
import { createHash, type Hash } from 'node:crypto';
import type { FileRecord } from './window-state.js';

/** What the contents of the listed files were compared by, and what the comparison found. */
export interface ContentReport {
  /** `sha256`: every file read and hashed (--content); `size`: sizes only (and row counts unless --quick). */
  compared_by: 'sha256' | 'size';
  /** Files read and hashed. */
  hashed: number;
  /** Hashed files equal to their recorded SHA-256. */
  equal: number;
  /** Hashed files whose SHA-256 differs from the recorded one (content-mismatch problems). */
  differ: number;
  /** Files whose record carries no checksum (written by a version before checksums): not hashed. */
  no_checksum: number;
}

/** Tallies the content checks of one verify. */
export class ContentCheck {
  readonly report: ContentReport;

  constructor(readonly enabled: boolean) {
    this.report = { compared_by: enabled ? 'sha256' : 'size', hashed: 0, equal: 0, differ: 0, no_checksum: 0 };
  }

  /** The hash to feed with the file's bytes, or null when its content is not compared (not asked, or no checksum recorded). */
  hashFor(file: FileRecord): Hash | null {
    if (!this.enabled) return null;
    if (file.sha256 === undefined) {
      this.report.no_checksum++;
      return null;
    }
    return createHash('sha256');
  }

  /** After the whole file went through `hash`: the problem's message when it differs, else null. */
  compare(file: FileRecord, hash: Hash): string | null {
    const got = hash.digest('hex');
    this.report.hashed++;
    if (got === file.sha256) {
      this.report.equal++;
      return null;
    }
    this.report.differ++;
    return `file content differs from what was written: SHA-256 ${got}, the window records ${file.sha256} (same size: edited or rotted in place)`;
  }
}

/** The verify summary's line on contents. */
export function describeContentCheck(c: ContentReport): string {
  if (c.compared_by === 'size') return 'contents: compared by size only (--content reads every file and compares its SHA-256)';
  const older = c.no_checksum > 0 ? `, ${c.no_checksum} with no checksum recorded (written by an older version: not compared)` : '';
  return `contents: ${c.hashed} files read and hashed (SHA-256): ${c.equal} equal, ${c.differ} differ${older}`;
}
