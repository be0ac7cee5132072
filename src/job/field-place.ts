/**
 * Where a field of a loaded job is written in its file (`jobs/x.yaml:12:9 targets[1].wallet`), for
 * a check that runs after the loader (the job's tables, its names resolved) to name the line as the
 * loader's own problems do. The file is read again: such a check fails rarely, and a `Job` carries
 * no positions.
 */
import { readFileSync } from 'node:fs';
import type { FieldPath, Position } from '../yaml-file/field-path.js';
import { parseYaml } from '../yaml-file/yaml-doc.js';
import type { Job } from './job.js';

/** `targets[1].events[0].tables.events` -> ['targets', 1, 'events', 0, 'tables', 'events']. */
export function parseFieldPath(field: string): FieldPath {
  const path: (string | number)[] = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) path.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return path;
}

/** Where the field is written in the job's file; undefined when the file cannot be read again. */
export function fieldPosition(job: Pick<Job, 'jobFile'>, field: string): Position | undefined {
  try {
    const doc = parseYaml(readFileSync(job.jobFile, 'utf8'), job.jobFile);
    if (doc.syntaxProblems.length === 0) return doc.locate(parseFieldPath(field));
  } catch {
    // The file moved or is not readable now: the field alone still says where.
  }
  return undefined;
}

/** `<job file>:<line>:<column> <field>`, or `<job file> <field>` when the file cannot be read again. */
export function fieldPlace(job: Pick<Job, 'jobFile'>, field: string): string {
  const at = fieldPosition(job, field);
  return at ? `${job.jobFile}:${at.line}:${at.column} ${field}` : `${job.jobFile} ${field}`;
}
