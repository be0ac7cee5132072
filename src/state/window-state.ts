import { rm } from 'node:fs/promises';
import pLimit from 'p-limit';
import type { ObjectStore } from '../store/store.js';
import { CommitStoppedError, StateCorruptError } from './errors.js';
import { parseWindowKey, windowKey, type Interval } from '../plan/index.js';
import { committedBy, manifestWindows, type UnitManifest } from './unit-manifest.js';
import { UnitManifests } from './unit-manifests.js';

export type { Interval };

/**
 * Completed windows of a job, kept at the destination beside the data, so a container with an
 * empty disk resumes where the last run stopped.
 *
 * Layout under `_state/<job>/`:
 *   units/<unitKey>.json, segments/<unitKey>/ the unit's completed windows folded out of their markers
 *                                            (src/state/unit-manifest.ts): what a run reads
 *   completed/<unitKey>/<start>_<end>.json   one marker per window committed and not yet folded: its files
 *   pending/<unitKey>/<start>_<end>.json     keys about to be uploaded (written before the upload,
 *                                            removed after the completed marker): orphans of a crash
 *   repair/<unitKey>.json                    windows found reorganised, until all are exported again
 *   replacing/<runId>.json                   completed windows a run exports again, recorded before it starts,
 *                                            until none is left (src/state/replacement-record.ts)
 *   checked/<unitKey>.json                   windows whose edges the last reorganisation check found
 *                                            still the chain's (src/state/reorg-check.ts)
 *   settled/<unitKey>.json                   windows a later run recounted: settled, or equal within
 *                                            the settle horizon (src/state/settled-windows.ts)
 *   reports/<runId>.json, last-run.json     run reports
 *   lease.json, lease-shard-<i>-of-<n>.json  who holds the job: its exclusive and shared entries (src/state/job-lease.ts)
 *
 * Commit protocol for one window (WindowState.commit): stage files locally -> write pending marker ->
 * upload files -> write completed marker -> delete pending marker. A crash at any point leaves either
 * a completed window or a pending marker whose keys the next run deletes before exporting the window again.
 * Completed markers are a log: folded into the unit's manifest (every FOLD_EVERY commits of a unit,
 * at the end of a run, and at the start of the next for what a crashed run left), then deleted. A
 * marker is newer than the manifest: it replaces the manifest's windows it overlaps.
 *
 * Completed windows of a unit never overlap. A window exported again (--force, --rewind, a changed
 * chunk) replaces every completed window it overlaps: the pending marker names them (`replaces`,
 * with their files), and once the new completed marker is written their files that the new export
 * did not overwrite and their markers are deleted. The pending marker carries the run id, so the
 * next run knows whether a crashed commit got as far as its completed marker: if it did, it
 * finishes the replacement; if not, it deletes what was uploaded, and when the upload may have
 * overwritten files of the old export of the same window, that old window too (it is exported again).
 */
export interface FileRecord {
  key: string;
  rows: number;
  bytes: number;
  /**
   * Hex SHA-256 of the file's bytes, taken while it was written (src/sink/content-digest.ts): what
   * `verify --content` and `run --repair` compare. Absent in records of older versions.
   */
  sha256?: string;
}

export interface WindowRecord {
  unit_key: string;
  start: number;
  end: number;
  rows: number;
  files: FileRecord[];
  run_id: string;
  completed_at: string;
  /**
   * The chain's block at the window's upper edge (block windows: block end - 1), as the service
   * had it before the window's rows were read. Its hash commits to every block below it, so a
   * later run that finds another hash there knows a block at or below the edge was replaced
   * (src/state/reorg-check.ts). Absent in records of older versions and of time windows.
   */
  edge?: BlockEdge;
  /**
   * The window replaced rows an earlier commit exported (a reorganisation, --force, --rewind, a
   * repair): the rows most at risk of coming from an answer of another branch (a cache), which
   * `verify --chain-hashes` checks even where the edge matches. Absent in records of older versions.
   */
  reexported?: true;
}

/** A data file written on local disk, uploaded as `key` when its window commits. */
export interface StagedFile extends FileRecord {
  /** The local file; the commit removes it, uploaded or not. */
  path: string;
  contentType: string;
  sha256: string;
  /** Hex MD5 of its bytes, taken while it was written: sent with the upload for the store to check. */
  md5: string;
}

/** What a window's commit is handed: the window, its staged files, and its edge (block windows). */
export interface WindowCommit {
  unit_key: string;
  start: number;
  end: number;
  run_id: string;
  files: StagedFile[];
  edge?: BlockEdge | undefined;
}

export interface BlockEdge {
  block_number: number;
  block_hash: string;
}

/**
 * What a reorganisation check found still the chain's (src/state/reorg-check.ts): windows of one
 * unit, each named by its completed marker's ETag (so a window exported again since is not one of
 * them) with its edge, all matching the chain as the service had it at `checked_at`.
 */
export interface CheckedWindows {
  checked_at: string;
  windows: CheckedWindow[];
  /**
   * The newest window found below the horizon: a window ending at or before it is below the
   * horizon too (its edge is no higher), so the next check need not read its marker.
   */
  floor?: { start: number; end: number; edge_block: number };
}

export interface CheckedWindow {
  start: number;
  end: number;
  /** What named the window's export when it was checked (WindowState.commitOf). */
  commit: string;
  edge: BlockEdge;
}

/** What a pending marker holds. `run_id` and `replaces` are absent in markers of older versions. */
export interface PendingMarker {
  keys: string[];
  run_id?: string;
  /** Completed windows of the unit this commit replaces, with their file keys. */
  replaces?: { start: number; end: number; keys: string[] }[];
}

export interface WindowStateOptions {
  /** Run id written into pending markers (recovery compares it with the completed marker's). */
  runId?: string;
  /** Called before every state write; throws to stop a run that may no longer write (lost lease). */
  guard?: () => void;
  /**
   * What becomes of the files of replaced windows once their replacement is committed (default:
   * deleted). An Iceberg table keeps them: its snapshots still name them (src/iceberg/).
   */
  dropReplaced?: (keys: string[]) => Promise<void>;
  /**
   * Called before a window's first upload with the keys of the files of the windows it replaces;
   * throws to refuse the commit (a run: files no state names beside the window, src/state/unreferenced-files.ts).
   */
  beforeUpload?: (commit: WindowCommit, replaced: ReadonlySet<string>) => Promise<void>;
}

function parseMarkerName(name: string): Interval | null {
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

const overlaps = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;
const sameWindow = (a: Interval, b: Interval) => a.start === b.start && a.end === b.end;
const byStart = (a: Interval, b: Interval) => a.start - b.start;

/** Windows of a unit committed by one WindowState before it folds them into the unit's manifest. */
const FOLD_EVERY = 512;
/** Units folded at once. */
const FOLDS = 16;
/** Units whose records completedRecords() reads ahead of the one it hands out. */
const READS_AHEAD = 8;

/** Which windows a writer owns (a shard owns some units, or some windows of a unit); window null: a marker not named as a window. */
export type OwnsWindow = (unitKey: string, window: Interval | null) => boolean;

/** What completedIntervals() found: where each unit's windows are recorded. */
interface Listed {
  /** Windows with a completed marker, by unit: window key -> the marker's ETag. */
  markers: Map<string, Map<string, string>>;
  manifests: Map<string, UnitManifest>;
  /** Units this instance folded windows into since (their manifests hold more than `manifests`). */
  folded: Set<string>;
}

export class WindowState {
  readonly root: string;
  private readonly runId: string | undefined;
  private readonly guard: () => void;
  private readonly dropReplaced: (keys: string[]) => Promise<void>;
  private readonly beforeUpload: WindowStateOptions['beforeUpload'];
  /** Completed intervals per unit, from completedIntervals() and kept up to date by this instance's writes. */
  private known: Map<string, Interval[]> | null = null;
  /** Pending markers this instance wrote, with what they replace. */
  private readonly pending = new Map<string, PendingMarker>();
  /** Where completedIntervals() found each unit's windows (null: not listed yet). */
  private listed: Listed | null = null;
  private readonly manifests: UnitManifests;
  /** Records this instance committed, by unit, not yet folded into the unit's manifest. */
  private readonly unfolded = new Map<string, WindowRecord[]>();
  /** The fold of each unit under way (folds of one unit run one after the other). */
  private readonly folding = new Map<string, Promise<void>>();

  constructor(
    readonly store: ObjectStore,
    readonly jobName: string,
    opts: WindowStateOptions = {},
  ) {
    this.root = `_state/${jobName}`;
    this.runId = opts.runId;
    this.guard = opts.guard ?? (() => undefined);
    this.dropReplaced = opts.dropReplaced ?? ((keys) => store.deleteMany(keys));
    this.beforeUpload = opts.beforeUpload;
    this.manifests = new UnitManifests(store, this.root, () => this.guard());
  }

  completedKey(unitKey: string, start: number, end: number): string {
    return `${this.root}/completed/${unitKey}/${windowKey({ start, end })}.json`;
  }

  /** Where a unit's repair record lives (see pendingRepairs). */
  repairKey(unitKey: string): string {
    return `${this.root}/repair/${unitKey}.json`;
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
  private noteMarkers(unitKey: string, windows: readonly Interval[], present: boolean): void {
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

  /**
   * Folds the completed markers of the windows `owns` names into their units' manifests, then
   * deletes them: what a crashed run left, and every marker of a destination written before
   * manifests existed. Run after cleanPending (a marker of an unfinished replacement is not folded).
   */
  async foldMarkers(owns: OwnsWindow = () => true): Promise<number> {
    const prefix = `${this.root}/completed/`;
    const byUnit = new Map<string, string[]>();
    for await (const obj of this.store.list(prefix, { etags: false })) {
      const { unitKey, window } = parseMarkerPlace(obj.key.slice(prefix.length));
      if (!window || !owns(unitKey, window)) continue;
      let list = byUnit.get(unitKey);
      if (!list) byUnit.set(unitKey, (list = []));
      list.push(obj.key);
    }
    const limit = pLimit(FOLDS);
    let folded = 0;
    await Promise.all(
      [...byUnit].map(([unitKey, keys]) =>
        limit(async () => {
          const records: WindowRecord[] = [];
          const foldable: string[] = [];
          for (const key of keys) {
            const rec = await this.readJson<WindowRecord>(key);
            // A marker that does not fit its name stays for verify to report.
            if (rec && recordFitsPlace(rec, parseMarkerPlace(key.slice(prefix.length)))) {
              records.push(rec);
              foldable.push(key);
            }
          }
          await this.manifests.fold(unitKey, records, this.runId ?? 'fold');
          if (foldable.length > 0) await this.store.deleteMany(foldable);
          folded += records.length;
        }),
      ),
    );
    this.listed = null;
    this.known = null;
    return folded;
  }

  /** Folds the windows this instance committed into their units' manifests (the end of a run). */
  async foldCommitted(): Promise<void> {
    const limit = pLimit(FOLDS);
    await Promise.all([...this.unfolded.keys()].map((unitKey) => limit(() => this.foldUnit(unitKey))));
  }

  /** Folds the unit's windows this instance committed, after any fold of the unit under way. */
  private foldUnit(unitKey: string): Promise<void> {
    const next = (this.folding.get(unitKey) ?? Promise.resolve()).then(async () => {
      const records = this.unfolded.get(unitKey) ?? [];
      if (records.length === 0) return;
      this.unfolded.delete(unitKey);
      try {
        await this.manifests.fold(unitKey, records, this.runId ?? 'fold');
      } catch (err) {
        // Still in their markers: the next fold (or the next run's) takes them.
        this.unfolded.set(unitKey, [...records, ...(this.unfolded.get(unitKey) ?? [])]);
        throw err;
      }
      this.noteMarkers(unitKey, records, false);
      await this.store.deleteMany(records.map((r) => this.completedKey(unitKey, r.start, r.end)));
    });
    const settled = next.catch(() => undefined);
    this.folding.set(unitKey, settled);
    void settled.then(() => {
      if (this.folding.get(unitKey) === settled) this.folding.delete(unitKey);
    });
    return next;
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

  /** `replaced`: the completed windows it replaces, when the caller read them already. */
  async writePending(unitKey: string, start: number, end: number, keys: string[], replaced?: WindowRecord[]): Promise<void> {
    this.guard();
    replaced ??= await this.overlappingCompleted(unitKey, start, end);
    const marker: PendingMarker = {
      keys,
      ...(this.runId === undefined ? {} : { run_id: this.runId }),
      ...(replaced.length === 0
        ? {}
        : { replaces: replaced.map((r) => ({ start: r.start, end: r.end, keys: r.files.map((f) => f.key) })) }),
    };
    const key = this.pendingKey(unitKey, start, end);
    await this.store.put(key, JSON.stringify(marker), { contentType: 'application/json' });
    this.pending.set(key, marker);
  }

  /**
   * The whole commit of one window (see the file comment): pending marker (when there are files),
   * the upload of every staged file, completed marker, then what the window replaces and the
   * pending marker are removed. The local files are removed whatever happens; a commit that fails
   * (or stops before an upload, once `signal` is aborted) leaves its pending marker to cleanPending.
   */
  async commit(window: WindowCommit, opts: { signal?: AbortSignal | undefined } = {}): Promise<void> {
    const { unit_key, start, end, run_id, files, edge } = window;
    try {
      if (files.length > 0) {
        const replaced = await this.overlappingCompleted(unit_key, start, end);
        await this.beforeUpload?.(window, new Set(replaced.flatMap((r) => r.files.map((f) => f.key))));
        await this.writePending(
          unit_key,
          start,
          end,
          files.map((f) => f.key),
          replaced,
        );
      }
      for (const f of files) {
        if (opts.signal?.aborted) throw new CommitStoppedError('interrupted before upload');
        await this.store.putFile(f.key, f.path, { contentType: f.contentType, digests: { sha256: f.sha256, md5: f.md5 } });
        await rm(f.path, { force: true });
      }
      await this.writeCompleted({
        unit_key,
        start,
        end,
        rows: files.reduce((n, f) => n + f.rows, 0),
        files: files.map((f) => ({ key: f.key, rows: f.rows, bytes: f.bytes, sha256: f.sha256 })),
        run_id,
        completed_at: new Date().toISOString(),
        ...(edge ? { edge } : {}),
      });
    } finally {
      await Promise.all(files.map((f) => rm(f.path, { force: true })));
    }
  }

  /**
   * Records a window as completed, then removes what it replaces (see the file comment) and its
   * pending marker.
   */
  async writeCompleted(record: WindowRecord): Promise<void> {
    this.guard();
    const pendingKey = this.pendingKey(record.unit_key, record.start, record.end);
    let marker = this.pending.get(pendingKey);
    if (!marker) {
      // No files were uploaded (an empty window). A replacement still needs its marker for recovery.
      const replaced = await this.overlappingCompleted(record.unit_key, record.start, record.end);
      if (replaced.length > 0) {
        await this.writePending(record.unit_key, record.start, record.end, []);
        marker = this.pending.get(pendingKey);
      }
    }
    if (marker?.replaces?.length) record = { ...record, reexported: true };
    await this.store.put(this.completedKey(record.unit_key, record.start, record.end), JSON.stringify(record), {
      contentType: 'application/json',
    });
    if (marker?.replaces?.length) await this.finishReplacing(record.unit_key, record, marker.replaces);
    this.remember(record.unit_key, record, marker?.replaces ?? []);
    this.noteMarkers(record.unit_key, [record], true);
    await this.store.delete(pendingKey);
    this.pending.delete(pendingKey);
    const unfolded = this.unfolded.get(record.unit_key) ?? [];
    this.unfolded.set(record.unit_key, [...unfolded.filter((r) => !overlaps(r, record)), record]);
    // The window is committed whatever the fold does: what it could not fold, foldCommitted tries again.
    if (unfolded.length + 1 >= FOLD_EVERY) await this.foldUnit(record.unit_key).catch(() => undefined);
  }

  async deleteCompleted(unitKey: string, start: number, end: number): Promise<void> {
    this.guard();
    await this.store.delete(this.completedKey(unitKey, start, end));
    await this.manifests.drop(unitKey, [{ start, end }]);
    this.unfolded.set(
      unitKey,
      (this.unfolded.get(unitKey) ?? []).filter((r) => !sameWindow(r, { start, end })),
    );
    this.remember(unitKey, null, [{ start, end }]);
  }

  /**
   * Recovers what crashed runs left (see the file comment): removes the files of windows they
   * uploaded without completing, finishes replacements whose new marker was written, and deletes
   * the pending markers. Returns the data keys deleted. `ownsUnit` limits the cleanup to some unit
   * keys (a shard must not delete what another shard is uploading at the same time).
   */
  async cleanPending(owns: OwnsWindow = () => true): Promise<string[]> {
    const pendingPrefix = `${this.root}/pending/`;
    const deleted: string[] = [];
    const replaced: string[] = [];
    const markers: string[] = [];
    for await (const obj of this.store.list(pendingPrefix, { etags: false })) {
      const rest = obj.key.slice(pendingPrefix.length);
      const { unitKey, window } = parseMarkerPlace(rest);
      if (!owns(unitKey, window)) continue;
      const marker = await this.readJson<PendingMarker>(obj.key);
      const keys = marker?.keys ?? [];
      if (!Array.isArray(keys)) throw new StateCorruptError(obj.key, '"keys" is not an array');
      const replaces = marker?.replaces ?? [];
      if (!Array.isArray(replaces)) throw new StateCorruptError(obj.key, '"replaces" is not an array');
      // The window's completed record, in its marker or already folded into the unit's manifest.
      const completed = window
        ? await this.readCompleted(unitKey, window.start, window.end)
        : await this.readJson<WindowRecord>(`${this.root}/completed/${rest}`);
      const committed = completed !== null && marker?.run_id !== undefined && completed.run_id === marker.run_id;
      if (committed && window) {
        // The crash came after the new completed marker: finish the replacement.
        deleted.push(...(await this.finishReplacing(unitKey, completed, replaces)));
      } else if (completed && window && replaces.some((r) => sameWindow(r, window))) {
        // The old export of this very window may have been partly overwritten: drop it, export it again.
        const old = new Set(completed.files.map((f) => f.key));
        deleted.push(...keys.filter((k) => !old.has(k)));
        replaced.push(...old);
        markers.push(obj.key.replace(`${this.root}/pending/`, `${this.root}/completed/`));
        await this.manifests.drop(unitKey, [window]);
      } else {
        // A crash after the completed marker but before the pending one was removed: those files are live.
        const live = new Set(completed?.files.map((f) => f.key) ?? []);
        deleted.push(...keys.filter((k) => !live.has(k)));
      }
      markers.push(obj.key);
    }
    if (deleted.length > 0) await this.store.deleteMany(deleted);
    if (replaced.length > 0) await this.dropReplaced(replaced);
    if (markers.length > 0) await this.store.deleteMany(markers);
    this.known = null;
    this.listed = null;
    return [...deleted, ...replaced];
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

  /**
   * Windows of each unit found reorganised and not yet all exported again (src/state/reorg-check.ts).
   * Kept until every one is replaced: the newest edges of a repair that crashed half-way may already
   * match while older windows still hold rows of the old branch.
   */
  async pendingRepairs(): Promise<Map<string, Interval[]>> {
    const prefix = `${this.root}/repair/`;
    const out = new Map<string, Interval[]>();
    for await (const obj of this.store.list(prefix, { etags: false })) {
      if (!obj.key.endsWith('.json')) continue;
      const body = await this.readJson<{ windows?: unknown }>(obj.key);
      const windows = body?.windows;
      if (
        !Array.isArray(windows) ||
        !windows.every((w: { start?: unknown; end?: unknown } | null) => Number.isSafeInteger(w?.start) && Number.isSafeInteger(w?.end))
      ) {
        throw new StateCorruptError(obj.key, '"windows" is not a list of {start, end}');
      }
      out.set(obj.key.slice(prefix.length, -'.json'.length), windows as Interval[]);
    }
    return out;
  }

  async writeRepair(unitKey: string, windows: Interval[]): Promise<void> {
    this.guard();
    await this.store.put(this.repairKey(unitKey), JSON.stringify({ windows: windows.map((w) => ({ start: w.start, end: w.end })) }), {
      contentType: 'application/json',
    });
  }

  /** What the last reorganisation check of a unit found still the chain's (null: none recorded). */
  async readChecked(unitKey: string): Promise<CheckedWindows | null> {
    const body = await this.readJson<CheckedWindows>(`${this.root}/checked/${unitKey}.json`);
    if (body === null) return null;
    // Windows recorded by versions that named a window's export by its marker's ETag: checked again.
    if (Array.isArray(body.windows)) body.windows = body.windows.filter((w) => !(w && 'etag' in w && !('commit' in w)));
    const ok =
      Array.isArray(body.windows) &&
      body.windows.every(
        (w) =>
          Number.isSafeInteger(w?.start) &&
          Number.isSafeInteger(w?.end) &&
          typeof w.commit === 'string' &&
          Number.isSafeInteger(w.edge?.block_number) &&
          typeof w.edge?.block_hash === 'string',
      ) &&
      (body.floor === undefined || (Number.isSafeInteger(body.floor.end) && Number.isSafeInteger(body.floor.edge_block)));
    if (!ok)
      throw new StateCorruptError(
        `${this.root}/checked/${unitKey}.json`,
        '"windows" is not a list of {start, end, commit, edge}, or "floor" is malformed',
      );
    return body;
  }

  async writeChecked(unitKey: string, checked: CheckedWindows): Promise<void> {
    this.guard();
    await this.store.put(`${this.root}/checked/${unitKey}.json`, JSON.stringify(checked), { contentType: 'application/json' });
  }

  async clearRepair(unitKey: string): Promise<void> {
    this.guard();
    await this.store.delete(this.repairKey(unitKey));
  }

  /** `lastRunName`: the "latest report" object beside the reports (one per shard when sharded). */
  async writeReport(runId: string, report: unknown, lastRunName = 'last-run.json'): Promise<string> {
    const body = JSON.stringify(report, null, 2);
    const key = `${this.root}/reports/${runId}.json`;
    await this.store.put(key, body, { contentType: 'application/json' });
    await this.store.put(`${this.root}/${lastRunName}`, body, { contentType: 'application/json' });
    return key;
  }

  /** Deletes the replaced windows' files the new record does not list, then their markers. Returns the files deleted. */
  private async finishReplacing(
    unitKey: string,
    record: WindowRecord,
    replaces: NonNullable<PendingMarker['replaces']>,
  ): Promise<string[]> {
    const live = new Set(record.files.map((f) => f.key));
    const stale = [...new Set(replaces.flatMap((r) => r.keys))].filter((k) => !live.has(k));
    if (stale.length > 0) await this.dropReplaced(stale);
    const oldMarkers = replaces.filter((r) => !sameWindow(r, record)).map((r) => this.completedKey(unitKey, r.start, r.end));
    if (oldMarkers.length > 0) await this.store.deleteMany(oldMarkers);
    return stale;
  }

  private remember(unitKey: string, added: Interval | null, removed: Interval[]): void {
    if (!this.known) return;
    const list = (this.known.get(unitKey) ?? []).filter((i) => !removed.some((r) => sameWindow(r, i)) && !(added && sameWindow(added, i)));
    if (added) list.push({ start: added.start, end: added.end });
    list.sort((a, b) => a.start - b.start);
    this.known.set(unitKey, list);
  }

  private async readJson<T>(key: string): Promise<T | null> {
    const obj = await this.store.get(key);
    if (!obj) return null;
    try {
      return JSON.parse(obj.body.toString('utf8')) as T;
    } catch (err) {
      throw new StateCorruptError(key, `not valid JSON (${(err as Error).message})`);
    }
  }
}
