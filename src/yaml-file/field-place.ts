/**
 * Where a field is written in a YAML or JSON file (`targets[1].wallet` -> line and column), for a
 * check that runs after the file was read (a job's tables, its names resolved, rules across
 * settings) to name the line as the loader's own problems do. The file is read again: such a check
 * fails rarely, and what the loader gives carries no positions.
 */
import { readFileSync } from 'node:fs';
import type { FieldPath, Position } from './field-path.js';
import { parseYaml } from './yaml-doc.js';

/** `targets[1].events[0].tables.events` -> ['targets', 1, 'events', 0, 'tables', 'events']. */
export function parseFieldPath(field: string): FieldPath {
  const path: (string | number)[] = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) path.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return path;
}

/** Where the field is written in the file; undefined when the file cannot be read again. */
export function fieldPosition(file: string, field: string): Position | undefined {
  try {
    const doc = parseYaml(readFileSync(file, 'utf8'), file);
    if (doc.syntaxProblems.length === 0) return doc.locate(parseFieldPath(field));
  } catch {
    // The file moved or is not readable now: the field alone still says where.
  }
  return undefined;
}
