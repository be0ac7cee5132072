/**
 * The file format a destination already holds for a job. Completed windows are not per format: a
 * run whose `--format` differs from the files already exported would find every window done and
 * write nothing, or mix two formats in one table's folders (readers globbing one extension miss
 * rows, readers globbing both see them twice). So a run refuses it, and `verify` says so.
 */
import type { OutputFormat } from '../sink/sink.js';
import { ICEBERG_DATA_EXTENSION } from '../sink/formats.js';
import { UserInputError } from '../errors.js';
import type { Interval } from '../plan/index.js';
import type { WindowState } from './window-state.js';

/** Completed records read at most to find one that lists a file (empty windows list none). */
const MAX_READS = 5;

export function formatOfKey(key: string): OutputFormat | null {
  if (key.endsWith(ICEBERG_DATA_EXTENSION)) return 'iceberg';
  if (key.endsWith('.parquet')) return 'parquet';
  if (/\.ndjson(\.[a-z0-9]+)?$/.test(key)) return 'ndjson';
  return null;
}

/** The format of the newest completed windows' files (a few gets), or null when none lists a file. */
export async function heldFormat(state: WindowState, completed: Map<string, Interval[]>): Promise<OutputFormat | null> {
  let reads = 0;
  for (const [unitKey, list] of completed) {
    for (const w of [...list].reverse()) {
      if (reads++ >= MAX_READS) return null;
      const rec = await state.readCompleted(unitKey, w.start, w.end);
      const format = rec?.files.map((f) => formatOfKey(f.key)).find((f) => f !== null);
      if (format) return format;
    }
  }
  return null;
}

export class DestinationFormatError extends UserInputError {
  override name = 'DestinationFormatError';
  constructor(location: string, jobName: string, held: OutputFormat, wanted: OutputFormat) {
    super(`The destination holds ${held} files of job ${jobName}; this run would write ${wanted}`, {
      details: `${location}: completed windows are ${held}; they would not be exported again as ${wanted}`,
      hint: `Keep --format ${held} for this destination, use another destination prefix for ${wanted}, or add --force to export every window again as ${wanted} (the ${held} files are replaced).`,
    });
  }
}
