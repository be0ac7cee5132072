/**
 * Run ids: written into pending and completed markers, reports, and an Iceberg table's data file
 * names and snapshot summaries. A compaction's id says it is one, so a commit of the table can
 * tell its merged files (same rows, other files) from a run's new rows.
 */
import { randomUUID } from 'node:crypto';

/** A run's id: its start time (UTC, to the second) and a random suffix. */
export function newRunId(): string {
  const time = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${time}-${randomUUID().slice(0, 8)}`;
}

const COMPACTION = 'compact-';

/** A compaction's run id. */
export function newCompactionRunId(): string {
  return `${COMPACTION}${newRunId()}`;
}

/** Whether a window was written by a compaction (its record's run id). */
export function isCompactionRunId(runId: string | undefined): boolean {
  return runId?.startsWith(COMPACTION) === true;
}
