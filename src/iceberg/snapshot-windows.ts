/**
 * The windows a snapshot holds. Each commit writes, beside its manifests, a file of the table's
 * completed windows (`metadata/<commit>-windows.ndjson.gz`, one JSON object per line: unit, interval,
 * rows, the run that exported it, its edge block and hash, and its data files) and names it in the
 * snapshot's summary. The windows and the files are made current by the same metadata write, so the
 * table never holds a window's files without its record or the other way round: a reader (or
 * `verify`) knows from the snapshot alone which ranges of which chains it holds whole. The summary
 * also carries, per chain, where the table's rows stop being complete.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseStreamKey } from '../plan/stream-key.js';
import type { BlockEdge, WindowRecord } from '../state/window-state.js';

/** The summary property naming the snapshot's windows file. */
export const WINDOWS_FILE_PROPERTY = 'insight-export.windows-file';
/** Its name's ending, after the commit id. */
export const WINDOWS_FILE_SUFFIX = 'windows.ndjson.gz';

/** A line of the windows file. */
export interface SnapshotWindow {
  unit: string;
  chain_id: number | null;
  axis: 'block' | 'time' | null;
  start: number;
  end: number;
  rows: number;
  run_id: string;
  completed_at: string;
  edge?: BlockEdge;
  /** The window's data files, as the manifests name them (absolute URIs), with their rows. */
  files: { path: string; rows: number }[];
}

/** One window of a table, from its state record; `uri` names a data file as the manifests do. */
export function snapshotWindow(rec: WindowRecord, uri: (key: string) => string): SnapshotWindow {
  const unit = parseStreamKey(rec.unit_key);
  return {
    unit: rec.unit_key,
    chain_id: unit?.chainId ?? null,
    axis: unit?.axis ?? null,
    start: rec.start,
    end: rec.end,
    rows: rec.rows,
    run_id: rec.run_id,
    completed_at: rec.completed_at,
    ...(rec.edge ? { edge: rec.edge } : {}),
    files: rec.files.map((f) => ({ path: uri(f.key), rows: f.rows })),
  };
}

/** The summary property holding a digest of the windows (a commit is due when it changes, rows or not). */
export const WINDOWS_DIGEST_PROPERTY = 'insight-export.windows-sha256';

/** The windows file's body and the digest of its lines. */
export function encodeWindows(windows: readonly SnapshotWindow[]): { body: Buffer; sha256: string } {
  const text = windows.map((w) => `${JSON.stringify(w)}\n`).join('');
  return { body: gzipSync(text), sha256: createHash('sha256').update(text).digest('hex') };
}

export function decodeWindows(body: Buffer): SnapshotWindow[] {
  return gunzipSync(body)
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SnapshotWindow);
}

/**
 * Per chain, the end of the range the table holds whole: each unit's windows from its first one up
 * to its first gap, the lowest of the chain's units. `insight-export.chain-<id>.complete-before-block`
 * (a block number: every row below it is in the table) or `…-complete-before-time` (ISO 8601).
 */
export function completeBefore(windows: readonly SnapshotWindow[]): Record<string, string> {
  const byStream = new Map<string, SnapshotWindow[]>();
  for (const w of windows) {
    if (w.chain_id === null || w.axis === null) continue;
    let list = byStream.get(w.unit);
    if (!list) byStream.set(w.unit, (list = []));
    list.push(w);
  }
  const lowest = new Map<string, { axis: 'block' | 'time'; end: number }>();
  for (const list of byStream.values()) {
    list.sort((a, b) => a.start - b.start);
    let end = list[0]!.end;
    for (const w of list.slice(1)) {
      if (w.start !== end) break;
      end = w.end;
    }
    const key = `${list[0]!.chain_id}/${list[0]!.axis}`;
    const known = lowest.get(key);
    if (!known || end < known.end) lowest.set(key, { axis: list[0]!.axis!, end });
  }
  const out: Record<string, string> = {};
  for (const [key, { axis, end }] of [...lowest].sort(([a], [b]) => a.localeCompare(b))) {
    const chain = key.slice(0, key.indexOf('/'));
    out[`insight-export.chain-${chain}.complete-before-${axis}`] =
      axis === 'block' ? String(end) : new Date(end * 1000).toISOString().replace('.000Z', 'Z');
  }
  return out;
}
