import { rm } from 'node:fs/promises';
import pLimit from 'p-limit';
import type { ObjectStore } from '../store/store.js';
import { CommitStoppedError, StateCorruptError } from './errors.js';
import type { Interval } from '../plan/index.js';
import { CompletedWindows, overlaps, sameWindow } from './completed-windows.js';
import { parseMarkerPlace, recordFitsPlace, type PendingMarker } from './markers.js';
import { ReorgRecords, type CheckedWindows } from './reorg-records.js';
import type { WindowCommit, WindowRecord } from './window-record.js';

export type { Interval };
export type { BlockEdge, FileRecord, StagedFile, WindowCommit, WindowRecord } from './window-record.js';
export { parseMarkerPlace, parsePendingKeys, recordFitsPlace, type MarkerPlace, type PendingMarker } from './markers.js';
export type { CheckedWindow, CheckedWindows } from './reorg-records.js';
export { CompletedWindows } from './completed-windows.js';

/**
 * Completed windows of a job, kept at the destination beside the data, so a container with an
 * empty disk resumes where the last run stopped.
 *
 * Layout under `_state/<job>/`:
 *   units/<unitKey>.json, segments/<unitKey>/ the unit's completed windows folded out of their markers
 *                                            (src/state/stream-manifest.ts): what a run reads
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

/** Windows of a unit committed by one WindowState before it folds them into the unit's manifest. */
const FOLD_EVERY = 512;
/** Units folded at once. */
const FOLDS = 16;

/** Which windows a writer owns (a shard owns some units, or some windows of a unit); window null: a marker not named as a window. */
export type OwnsWindow = (unitKey: string, window: Interval | null) => boolean;

export class WindowState extends CompletedWindows {
  private readonly runId: string | undefined;
  private readonly dropReplaced: (keys: string[]) => Promise<void>;
  private readonly beforeUpload: WindowStateOptions['beforeUpload'];
  /** Pending markers this instance wrote, with what they replace. */
  private readonly pending = new Map<string, PendingMarker>();
  /** Records this instance committed, by unit, not yet folded into the unit's manifest. */
  private readonly unfolded = new Map<string, WindowRecord[]>();
  /** The fold of each unit under way (folds of one unit run one after the other). */
  private readonly folding = new Map<string, Promise<void>>();
  /** What the reorganisation check records (src/state/reorg-records.ts). */
  private readonly reorgRecords: ReorgRecords;

  constructor(store: ObjectStore, jobName: string, opts: WindowStateOptions = {}) {
    super(store, jobName, opts.guard ?? (() => undefined));
    this.runId = opts.runId;
    this.dropReplaced = opts.dropReplaced ?? ((keys) => store.deleteMany(keys));
    this.beforeUpload = opts.beforeUpload;
    this.reorgRecords = new ReorgRecords(store, this.root, () => this.guard());
  }

  /** Where a unit's repair record lives (see pendingRepairs). */
  repairKey(unitKey: string): string {
    return this.reorgRecords.repairKey(unitKey);
  }

  /**
   * Folds the completed markers of the windows `owns` names into their units' manifests, then
   * deletes them: what a crashed run left, and every marker of a destination written before
   * manifests existed. Run after cleanPending (a marker of an unfinished replacement is not folded).
   */
  async foldMarkers(owns: OwnsWindow = () => true): Promise<number> {
    const prefix = `${this.root}/completed/`;
    const byStream = new Map<string, string[]>();
    for await (const obj of this.store.list(prefix, { etags: false })) {
      const { unitKey, window } = parseMarkerPlace(obj.key.slice(prefix.length));
      if (!window || !owns(unitKey, window)) continue;
      let list = byStream.get(unitKey);
      if (!list) byStream.set(unitKey, (list = []));
      list.push(obj.key);
    }
    const limit = pLimit(FOLDS);
    let folded = 0;
    await Promise.all(
      [...byStream].map(([unitKey, keys]) =>
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
    await Promise.all([...this.unfolded.keys()].map((unitKey) => limit(() => this.foldStream(unitKey))));
  }

  /** Folds the unit's windows this instance committed, after any fold of the unit under way. */
  private foldStream(unitKey: string): Promise<void> {
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
    if (unfolded.length + 1 >= FOLD_EVERY) await this.foldStream(record.unit_key).catch(() => undefined);
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
   * the pending markers. Returns the data keys deleted. `ownsStream` limits the cleanup to some unit
   * keys (a shard must not delete what another shard is uploading at the same time).
   */
  async cleanPending(owns: OwnsWindow = () => true): Promise<string[]> {
    const pendingPrefix = `${this.root}/pending/`;
    const deleted: string[] = [];
    const replaced: string[] = [];
    const markers: string[] = [];
    // Each window's completed record is read from the store, not from what this instance listed and
    // wrote: a completed marker whose write failed (S3 gone before it answered) may have landed,
    // and then the files its pending marker names are live (deleting them would lose its rows).
    this.known = null;
    this.listed = null;
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

  /** Windows of each unit found reorganised and not yet all exported again (src/state/reorg-records.ts). */
  pendingRepairs(): Promise<Map<string, Interval[]>> {
    return this.reorgRecords.pendingRepairs();
  }

  writeRepair(unitKey: string, windows: Interval[]): Promise<void> {
    return this.reorgRecords.writeRepair(unitKey, windows);
  }

  /** What the last reorganisation check of a unit found still the chain's (null: none recorded). */
  readChecked(unitKey: string): Promise<CheckedWindows | null> {
    return this.reorgRecords.readChecked(unitKey);
  }

  writeChecked(unitKey: string, checked: CheckedWindows): Promise<void> {
    return this.reorgRecords.writeChecked(unitKey, checked);
  }

  clearRepair(unitKey: string): Promise<void> {
    return this.reorgRecords.clearRepair(unitKey);
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
}
