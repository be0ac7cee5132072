import pLimit from 'p-limit';
import type { ObjectStore } from '../store/store.js';
import { StateCorruptError } from './errors.js';
import { windowKey, type Interval } from '../plan/index.js';
import { committedBy, manifestWindows, type StreamManifest } from './stream-manifest.js';
import { StreamManifests } from './stream-manifests.js';
import { parseMarkerName, parseMarkerPlace, parsePendingKeys, recordFitsPlace } from './markers.js';
import type { WindowRecord } from './window-record.js';

export const overlaps = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;
export const sameWindow = (a: Interval, b: Interval) => a.start === b.start && a.end === b.end;
export const byStart = (a: Interval, b: Interval) => a.start - b.start;

/** Units whose records completedRecords() reads ahead of the one it hands out. */
const READS_AHEAD = 8;

/** What completedIntervals() found: where each unit's windows are recorded. */
interface Listed {
  /** Windows with a completed marker, by unit: window key -> the marker's ETag. */
  markers: Map<string, Map<string, string>>;
  manifests: Map<string, StreamManifest>;
  /** Units this instance folded windows into since (their manifests hold more than `manifests`). */
  folded: Set<string>;
}

/** A state object read as JSON (null: absent). */
export async function readStateJson<T>(store: ObjectStore, key: string): Promise<T | null> {
  const obj = await store.get(key);
  if (!obj) return null;
  try {
    return JSON.parse(obj.body.toString('utf8')) as T;
  } catch (err) {
    throw new StateCorruptError(key, `not valid JSON (${(err as Error).message})`);
  }
}

/**
 * The completed windows of a job as its state holds them (manifests, segments and the markers not
 * folded yet), read; what WindowState (src/state/window-state.ts) writes and recovers.
 */
export class CompletedWindows {
  readonly root: string;
  /** Completed intervals per unit, from completedIntervals() and kept up to date by this instance's writes. */
  protected known: Map<string, Interval[]> | null = null;
  /** Where completedIntervals() found each unit's windows (null: not listed yet). */
  protected listed: Listed | null = null;
  protected readonly manifests: StreamManifests;

  constructor(
    readonly store: ObjectStore,
    readonly jobName: string,
    protected readonly guard: () => void,
  ) {
    this.root = `_state/${jobName}`;
    this.manifests = new StreamManifests(store, this.root, () => this.guard());
  }

  completedKey(unitKey: string, start: number, end: number): string {
    return `${this.root}/completed/${unitKey}/${windowKey({ start, end })}.json`;
  }

  pendingKey(unitKey: string, start: number, end: number): string {
    return `${this.root}/pending/${unitKey}/${windowKey({ start, end })}.json`;
  }

  /**
   * Every completed interval per unit key: the units' manifests (one read each) and the markers not
   * folded yet (one listing, no reads).
   */
  async completedIntervals(): Promise<Map<string, Interval[]>> {
    const markerWindows = await this.listMarkerWindows();
    const manifests = new Map([...(await this.manifests.readAll())].map(([unitKey, m]) => [unitKey, m.manifest]));
    const out = new Map<string, Interval[]>();
    for (const unitKey of new Set([...manifests.keys(), ...markerWindows.keys()])) {
      const own = (markerWindows.get(unitKey) ?? []).sort(byStart);
      const m = manifests.get(unitKey);
      const folded = m ? manifestWindows(m).filter((w) => !own.some((o) => overlaps(o, w))) : [];
      out.set(unitKey, [...folded, ...own].map((w) => ({ start: w.start, end: w.end })).sort(byStart));
    }
    this.listed = {
      markers: new Map([...markerWindows].map(([unitKey, list]) => [unitKey, new Map(list.map((w) => [windowKey(w), w.etag]))])),
      manifests,
      folded: new Set(),
    };
    this.known = new Map([...out].map(([k, v]) => [k, [...v]]));
    return out;
  }

  /** Whether the job has a completed window at the destination (a manifest or a marker). */
  async hasCompleted(): Promise<boolean> {
    for (const folder of ['units', 'completed'])
      for await (const _ of this.store.list(`${this.root}/${folder}/`, { etags: false })) return true;
    return false;
  }

  /**
   * What names a window's current export, as completedIntervals() found it: its marker's ETag
   * while the window is not folded, the run that committed it once it is (undefined: not listed).
   * A window exported again has another.
   */
  commitOf(unitKey: string, start: number, end: number): string | undefined {
    const etag = this.listed?.markers.get(unitKey)?.get(windowKey({ start, end }));
    if (etag !== undefined) return etag === '' ? undefined : `marker ${etag}`;
    const m = this.listed?.manifests.get(unitKey);
    const run = m ? committedBy(m, { start, end }) : undefined;
    return run === undefined ? undefined : `run ${run}`;
  }

  async readCompleted(unitKey: string, start: number, end: number): Promise<WindowRecord | null> {
    const key = windowKey({ start, end });
    const listed = this.listed;
    if (!listed || listed.markers.get(unitKey)?.has(key)) {
      const rec = await this.readJson<WindowRecord>(this.completedKey(unitKey, start, end));
      if (rec) return rec;
    }
    // What completedIntervals() found in the manifest is still all it holds unless this instance folded into it since.
    const m = listed?.manifests.get(unitKey);
    if (listed && !listed.folded.has(unitKey) && (!m || committedBy(m, { start, end }) === undefined)) return null;
    return (await this.manifests.records(unitKey)).get(key) ?? null;
  }

  /** Every completed window record of one unit: its manifest's, and its markers not folded yet (which replace what they overlap). */
  async unitRecords(unitKey: string): Promise<WindowRecord[]> {
    const prefix = `${this.root}/completed/`;
    const own: WindowRecord[] = [];
    for await (const obj of this.store.list(`${prefix}${unitKey}/`, { etags: false })) {
      const place = parseMarkerPlace(obj.key.slice(prefix.length));
      if (place.unitKey !== unitKey || !place.window) continue;
      const rec = await this.readJson<WindowRecord>(obj.key);
      if (rec && recordFitsPlace(rec, place)) own.push(rec);
    }
    const folded = [...(await this.manifests.records(unitKey)).values()].filter((r) => !own.some((o) => overlaps(o, r)));
    return [...folded, ...own].sort(byStart);
  }

  /** Keeps what completedIntervals() found up to date with this instance's marker writes and folds. */
  protected noteMarkers(unitKey: string, windows: readonly Interval[], present: boolean): void {
    if (!this.listed) return;
    let etags = this.listed.markers.get(unitKey);
    if (!etags) this.listed.markers.set(unitKey, (etags = new Map<string, string>()));
    // A marker written since the listing: its ETag is unknown here, so the window has no commit name.
    for (const w of windows) {
      if (present) etags.set(windowKey(w), '');
      else etags.delete(windowKey(w));
    }
    if (!present) this.listed.folded.add(unitKey);
  }

  /** Completed windows by unit from the markers' names (no reads), with the markers' ETags. */
  private async listMarkerWindows(): Promise<Map<string, (Interval & { etag: string })[]>> {
    const prefix = `${this.root}/completed/`;
    const out = new Map<string, (Interval & { etag: string })[]>();
    for await (const obj of this.store.list(prefix)) {
      const { unitKey, window } = parseMarkerPlace(obj.key.slice(prefix.length));
      if (!window) continue;
      let list = out.get(unitKey);
      if (!list) out.set(unitKey, (list = []));
      list.push({ ...window, etag: obj.etag });
    }
    return out;
  }

  /**
   * Every completed window record, unit by unit in key order (reads every manifest, segment and
   * marker: for verify and compaction, not for runs). A marker or manifest that cannot be read is
   * handed to `onBad` and skipped (absent: thrown).
   */
  async *completedRecords(onBad?: (key: string, problem: string, unitKey: string | null) => void): AsyncGenerator<WindowRecord> {
    const prefix = `${this.root}/completed/`;
    const markers = new Map<string, WindowRecord[]>();
    for await (const obj of this.store.list(prefix, { etags: false })) {
      if (!obj.key.endsWith('.json')) continue;
      const place = parseMarkerPlace(obj.key.slice(prefix.length));
      let rec: WindowRecord | null;
      try {
        rec = await this.readJson<WindowRecord>(obj.key);
      } catch (err) {
        if (!onBad) throw err;
        onBad(obj.key, `completed marker is not readable: ${(err as Error).message.split('\n')[0]}`, place.unitKey);
        continue;
      }
      if (!rec) continue;
      if (!recordFitsPlace(rec, place)) {
        const problem = 'completed marker does not match its name or lacks its file list';
        if (!onBad) throw new StateCorruptError(obj.key, problem);
        onBad(obj.key, problem, place.unitKey);
        continue;
      }
      let list = markers.get(place.unitKey);
      if (!list) markers.set(place.unitKey, (list = []));
      list.push(rec);
    }
    const manifests = await this.manifests.readAll(
      onBad && ((unitKey, err) => onBad(this.manifests.manifestKey(unitKey), err.details ?? err.shortMessage, unitKey)),
    );
    // Units' records are read a few at a time ahead of the one handed out, in unit key order.
    const limit = pLimit(READS_AHEAD);
    const folded = async (unitKey: string): Promise<WindowRecord[]> => {
      const read = manifests.get(unitKey);
      if (!read) return [];
      try {
        return [...(await this.manifests.records(unitKey, read)).values()];
      } catch (err) {
        if (!onBad || !(err instanceof StateCorruptError)) throw err;
        onBad(this.manifests.manifestKey(unitKey), err.details ?? err.shortMessage, unitKey);
        return [];
      }
    };
    const unitKeys = [...new Set([...manifests.keys(), ...markers.keys()])].sort();
    const ahead: Promise<WindowRecord[]>[] = [];
    for (let i = 0; i < unitKeys.length; i++) {
      while (ahead.length < READS_AHEAD && i + ahead.length < unitKeys.length) {
        const next = unitKeys[i + ahead.length]!;
        const p = limit(() => folded(next));
        p.catch(() => undefined); // awaited in turn below; not an unhandled rejection meanwhile
        ahead.push(p);
      }
      const own = markers.get(unitKeys[i]!) ?? [];
      const records = (await ahead.shift()!).filter((r) => !own.some((o) => overlaps(o, r)));
      yield* [...records, ...own].sort(byStart);
    }
  }

  /** Completed windows of a unit that overlap [start, end), with their records. */
  async overlappingCompleted(unitKey: string, start: number, end: number): Promise<WindowRecord[]> {
    const window = { start, end };
    let intervals: Interval[];
    if (this.known) {
      intervals = this.known.get(unitKey) ?? [];
    } else {
      intervals = [];
      const prefix = `${this.root}/completed/${unitKey}/`;
      for await (const obj of this.store.list(prefix, { etags: false })) {
        const i = parseMarkerName(obj.key.slice(prefix.length));
        if (i) intervals.push(i);
      }
      const folded = [...(await this.manifests.records(unitKey)).values()];
      intervals.push(...folded.filter((r) => !intervals.some((i) => overlaps(i, r))));
    }
    const out: WindowRecord[] = [];
    for (const i of intervals.filter((i) => overlaps(i, window))) {
      const rec = await this.readCompleted(unitKey, i.start, i.end);
      if (rec) out.push(rec);
    }
    return out;
  }

  /**
   * Every key the pending markers name: files of commits under way or left by a crash (what
   * cleanPending removes) and the files of the windows they replace.
   */
  async pendingFileKeys(): Promise<Set<string>> {
    const out = new Set<string>();
    for await (const obj of this.store.list(`${this.root}/pending/`, { etags: false })) {
      const got = await this.store.get(obj.key);
      if (got) for (const k of parsePendingKeys(obj.key, got.body)) out.add(k);
    }
    return out;
  }

  protected remember(unitKey: string, added: Interval | null, removed: Interval[]): void {
    if (!this.known) return;
    const list = (this.known.get(unitKey) ?? []).filter((i) => !removed.some((r) => sameWindow(r, i)) && !(added && sameWindow(added, i)));
    if (added) list.push({ start: added.start, end: added.end });
    list.sort((a, b) => a.start - b.start);
    this.known.set(unitKey, list);
  }

  protected readJson<T>(key: string): Promise<T | null> {
    return readStateJson<T>(this.store, key);
  }
}
