/** The markers of a window's commit (`pending/` and `completed/` below `_state/<job>/`): where one sits, what it holds. */
import { StateCorruptError } from './errors.js';
import { parseWindowKey, windowKey, type Interval } from '../plan/index.js';
import type { WindowRecord } from './window-record.js';

/** What a pending marker holds. `run_id` and `replaces` are absent in markers of older versions. */
export interface PendingMarker {
  keys: string[];
  run_id?: string;
  /** Completed windows of the unit this commit replaces, with their file keys. */
  replaces?: { start: number; end: number; keys: string[] }[];
}

export function parseMarkerName(name: string): Interval | null {
  return name.endsWith('.json') ? parseWindowKey(name.slice(0, -'.json'.length)) : null;
}

/** Where a marker sits: `<unitKey>/<start>_<end>.json` below `completed/` or `pending/`. */
export interface MarkerPlace {
  unitKey: string;
  /** The marker's file name (`<start>_<end>.json`). */
  name: string;
  /** The window the name encodes; null when the name is not a window's. */
  window: Interval | null;
}

/** Parses a marker key relative to its folder (`completed/` or `pending/`). */
export function parseMarkerPlace(rest: string): MarkerPlace {
  const slash = rest.lastIndexOf('/');
  const name = rest.slice(slash + 1);
  return { unitKey: rest.slice(0, Math.max(0, slash)), name, window: slash < 0 ? null : parseMarkerName(name) };
}

/** Whether a completed marker's record is the window its place names, with a well-formed file list. */
export function recordFitsPlace(rec: WindowRecord, place: MarkerPlace): boolean {
  return (
    rec.unit_key === place.unitKey &&
    Number.isSafeInteger(rec.start) &&
    Number.isSafeInteger(rec.end) &&
    place.name === `${windowKey({ start: rec.start, end: rec.end })}.json` &&
    Array.isArray(rec.files) &&
    rec.files.every(
      (f) =>
        f &&
        typeof f.key === 'string' &&
        Number.isSafeInteger(f.rows) &&
        Number.isSafeInteger(f.bytes) &&
        (f.sha256 === undefined || /^[0-9a-f]{64}$/.test(f.sha256)),
    )
  );
}

/** Every key a pending marker (at `key`) names: the files it uploads and the files of the windows it replaces. */
export function parsePendingKeys(key: string, body: Buffer): string[] {
  let marker: PendingMarker | null;
  try {
    marker = JSON.parse(body.toString('utf8')) as PendingMarker | null;
  } catch (err) {
    throw new StateCorruptError(key, `not valid JSON (${(err as Error).message})`);
  }
  if (marker && (!Array.isArray(marker.keys) || !(marker.replaces ?? []).every((r) => Array.isArray(r?.keys))))
    throw new StateCorruptError(key, '"keys" or a "replaces" entry\'s "keys" is not an array');
  return [...(marker?.keys ?? []), ...(marker?.replaces ?? []).flatMap((r) => r.keys)];
}
