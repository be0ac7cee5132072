/**
 * Data file names: `<target>__<start>_<end>[__<run id>]__<seq><extension>`, the window's own
 * interval and a sequence that depends only on the rows. An Iceberg table's files carry the run id
 * (of the run, or of the compaction, that wrote them): a window written again never overwrites a
 * file an older snapshot names. Runs write them (src/run/export-windows.ts, partitioned-writer.ts),
 * compaction writes and reads them (src/state/compact.ts).
 */
import { FORMAT_RULES, COMPRESSIONS } from './formats.js';

/** `<target>__<window key>[__<run id>]` (the window key: src/plan/plan.ts windowKey): what every file of one window of one target starts with. */
export function fileStem(target: string, windowKey: string, runId?: string): string {
  return `${target}__${windowKey}${runId === undefined ? '' : `__${runId}`}`;
}

/** The run id a window's file names carry: an Iceberg table's (a run's files never overwrite those an older snapshot names). */
export function runIdInNames(format: string, runId: string): string | undefined {
  return format === 'iceberg' ? runId : undefined;
}

/** The `seq`-th file of a window. */
export function fileName(stem: string, seq: number, extension: string): string {
  return `${stem}__${String(seq).padStart(4, '0')}${extension}`;
}

export interface FileNameParts {
  target: string;
  window: { start: number; end: number };
  runId: string | null;
  seq: number;
  extension: string;
}

const EXTENSIONS = [...new Set(Object.values(FORMAT_RULES).flatMap((rule) => COMPRESSIONS.map((c) => rule.extension(c))))]
  // Longest first: `.iceberg.parquet` before `.parquet`.
  .sort((a, b) => b.length - a.length)
  .map((e) => e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
const FILE_NAME = new RegExp(`^(.+?)__(\\d+)_(\\d+)(?:__([A-Za-z0-9-]+))?__(\\d+)(${EXTENSIONS.join('|')})$`);

/** The parts of a data file's name (the last segment of its key); null when it is not one. */
export function parseFileName(key: string): FileNameParts | null {
  const m = FILE_NAME.exec(key.slice(key.lastIndexOf('/') + 1));
  if (!m) return null;
  return {
    target: m[1]!,
    window: { start: Number(m[2]), end: Number(m[3]) },
    runId: m[4] ?? null,
    seq: Number(m[5]),
    extension: m[6]!,
  };
}
