import { StateCorruptError } from './errors.js';
import type { Interval } from '../plan/index.js';
import type { WindowRecord } from './window-state.js';

/**
 * A unit's manifest: every completed window of the unit folded out of the per-window markers
 * (src/state/window-state.ts), so that reading a complete job costs one object per unit, not one
 * per window.
 *
 *   units/<unitKey>.json             the manifest: the unit's windows (run-length encoded, each with
 *                                    the run that committed it) and its record segments, oldest first
 *   segments/<unitKey>/<name>.json   immutable: the full records (files, rows, edge) of some windows
 *
 * The manifest's window list is the truth: a segment's record counts only while the manifest lists
 * its window as committed by the record's run (a window replaced since lives in a newer segment, or
 * still in its marker). Manifests are rewritten with conditional writes, so several writers of one
 * unit (shards dividing its windows) never lose each other's windows.
 */
export interface StreamManifest {
  format: 1;
  unit_key: string;
  /** Run ids the windows refer to by index. */
  runs: string[];
  /** [start, width, count, run]: `count` consecutive windows of `width` from `start`, each committed by runs[run]. */
  windows: WindowRun[];
  segments: SegmentRef[];
}

export type WindowRun = [start: number, width: number, count: number, run: number];

export interface SegmentRef {
  key: string;
  /** Records the segment holds (live or not): what merging weighs. */
  records: number;
}

/** A completed window as the manifest lists it. */
export interface ManifestWindow extends Interval {
  run_id: string;
}

export interface Segment {
  format: 1;
  unit_key: string;
  records: WindowRecord[];
}

export const emptyManifest = (unitKey: string): StreamManifest => ({ format: 1, unit_key: unitKey, runs: [], windows: [], segments: [] });

/** The manifest's windows, in start order. */
export function manifestWindows(m: Pick<StreamManifest, 'runs' | 'windows'>): ManifestWindow[] {
  const out: ManifestWindow[] = [];
  for (const [start, width, count, run] of m.windows) {
    const run_id = m.runs[run]!;
    for (let i = 0; i < count; i++) out.push({ start: start + i * width, end: start + (i + 1) * width, run_id });
  }
  return out;
}

/** The run that committed the manifest's window [start, end), or undefined when it lists no such window. */
export function committedBy(m: StreamManifest, w: Interval): string | undefined {
  let lo = 0;
  let hi = m.windows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [start, width, count, run] = m.windows[mid]!;
    if (w.start < start) hi = mid - 1;
    else if (w.start >= start + width * count) lo = mid + 1;
    else return (w.start - start) % width === 0 && w.end - w.start === width ? m.runs[run] : undefined;
  }
  return undefined;
}

/** Windows (sorted, disjoint) in the manifest's run-length form. */
export function encodeWindows(windows: readonly ManifestWindow[]): Pick<StreamManifest, 'runs' | 'windows'> {
  const runs: string[] = [];
  const runIndex = new Map<string, number>();
  const out: WindowRun[] = [];
  for (const w of windows) {
    let run = runIndex.get(w.run_id);
    if (run === undefined) runIndex.set(w.run_id, (run = runs.push(w.run_id) - 1));
    const last = out.at(-1);
    const width = w.end - w.start;
    if (last && last[3] === run && last[1] === width && last[0] + last[1] * last[2] === w.start) last[2]++;
    else out.push([w.start, width, 1, run]);
  }
  return { runs, windows: out };
}

const overlaps = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;

/**
 * The windows after newer commits: a newer window replaces every window it overlaps (the
 * replacement rule of the commit protocol). Among the newer ones, a later commit wins an overlap.
 */
export function foldWindows(windows: readonly ManifestWindow[], newer: readonly WindowRecord[]): ManifestWindow[] {
  const kept: WindowRecord[] = [];
  for (const rec of [...newer].sort((a, b) => a.completed_at.localeCompare(b.completed_at))) {
    for (let i = kept.length - 1; i >= 0; i--) if (overlaps(kept[i]!, rec)) kept.splice(i, 1);
    kept.push(rec);
  }
  const sorted = [...kept].sort((a, b) => a.start - b.start);
  const out = windows.filter((w) => !overlapsAny(sorted, w));
  out.push(...sorted.map((r) => ({ start: r.start, end: r.end, run_id: r.run_id })));
  return out.sort((a, b) => a.start - b.start);
}

/** Whether `w` overlaps an interval of `sorted` (sorted by start, disjoint). */
function overlapsAny(sorted: readonly Interval[], w: Interval): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.end <= w.start) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo]!.start < w.end;
}

/**
 * Which of the manifest's segments to merge into one after appending a new one: the newest ones
 * while the newest holds at least half as many records as the one before (so a unit keeps
 * O(log windows) segments and each record is rewritten O(log windows) times).
 */
export function segmentsToMerge(segments: readonly SegmentRef[]): number {
  let n = 1;
  let records = segments.at(-1)?.records ?? 0;
  while (n < segments.length && records * 2 >= segments[segments.length - 1 - n]!.records) {
    records += segments[segments.length - 1 - n]!.records;
    n++;
  }
  return n;
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/** A manifest read from `key`, checked; throws StateCorruptError when it is not one. */
export function parseManifest(key: string, body: Buffer, unitKey: string): StreamManifest {
  const m = parseJson(key, body) as Partial<StreamManifest> | null;
  const ok =
    m !== null &&
    typeof m === 'object' &&
    m.format === 1 &&
    m.unit_key === unitKey &&
    Array.isArray(m.runs) &&
    m.runs.every((r) => typeof r === 'string') &&
    Array.isArray(m.windows) &&
    m.windows.every(
      (w) => Array.isArray(w) && w.length === 4 && w.every(isInt) && w[1] > 0 && w[2] > 0 && w[3] >= 0 && w[3] < m.runs!.length,
    ) &&
    Array.isArray(m.segments) &&
    m.segments.every((s) => typeof s?.key === 'string' && isInt(s.records));
  if (!ok) throw new StateCorruptError(key, `not a manifest of unit ${unitKey} (format 1: runs, windows, segments)`);
  return m as StreamManifest;
}

/** A segment read from `key`, checked; throws StateCorruptError when it is not one. */
export function parseSegment(key: string, body: Buffer, unitKey: string): Segment {
  const s = parseJson(key, body) as Partial<Segment> | null;
  const ok = s !== null && typeof s === 'object' && s.format === 1 && s.unit_key === unitKey && Array.isArray(s.records);
  if (!ok) throw new StateCorruptError(key, `not a segment of unit ${unitKey} (format 1: records)`);
  return s as Segment;
}

function parseJson(key: string, body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new StateCorruptError(key, `not valid JSON (${(err as Error).message})`);
  }
}
