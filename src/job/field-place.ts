/** Where a field of a loaded job is written in its file (`jobs/x.yaml:12:9 targets[1].wallet`). */
import type { Position } from '../yaml-file/field-path.js';
import { fieldPosition as positionInFile } from '../yaml-file/field-place.js';
import type { Job } from './job.js';

/** Where the field is written in the job's file; undefined when the file cannot be read again. */
export function fieldPosition(job: Pick<Job, 'jobFile'>, field: string): Position | undefined {
  return positionInFile(job.jobFile, field);
}

/** `<job file>:<line>:<column> <field>`, or `<job file> <field>` when the file cannot be read again. */
export function fieldPlace(job: Pick<Job, 'jobFile'>, field: string): string {
  const at = fieldPosition(job, field);
  return at ? `${job.jobFile}:${at.line}:${at.column} ${field}` : `${job.jobFile} ${field}`;
}
