import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { PreconditionFailedError } from '../store/errors.js';
import type { ObjectStore } from '../store/store.js';
import { windowKey, type Interval } from '../plan/index.js';
import { StateCorruptError } from './errors.js';
import {
  committedBy,
  emptyManifest,
  encodeWindows,
  foldWindows,
  manifestWindows,
  parseManifest,
  parseSegment,
  segmentsToMerge,
  type SegmentRef,
  type StreamManifest,
} from './stream-manifest.js';
import type { WindowRecord } from './window-state.js';

export interface ReadManifest {
  manifest: StreamManifest;
  /** null: the unit has no manifest yet (the first fold creates it). */
  etag: string | null;
}

/** Manifests read at once when listing a job's units. */
const READS = 32;
/** Conditional rewrites of one manifest before a fold gives up (another writer kept winning). */
const FOLD_ATTEMPTS = 8;
/** Units whose live records stay in memory (a replacement reads the records it replaces). */
const CACHED_UNITS = 16;

/** Reads and rewrites the unit manifests of one job (the format: src/state/stream-manifest.ts). */
export class StreamManifests {
  private readonly cache = new Map<string, { etag: string | null; records: Map<string, WindowRecord> }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly root: string,
    private readonly guard: () => void,
  ) {}

  manifestKey(unitKey: string): string {
    return `${this.root}/units/${unitKey}.json`;
  }

  /**
   * Every unit's manifest, from one listing and one read per unit. A manifest that cannot be read
   * is handed to `onBad` and left out (absent: thrown).
   */
  async readAll(onBad?: (unitKey: string, err: StateCorruptError) => void): Promise<Map<string, ReadManifest>> {
    const prefix = `${this.root}/units/`;
    const unitKeys: string[] = [];
    for await (const obj of this.store.list(prefix, { etags: false })) {
      if (obj.key.endsWith('.json')) unitKeys.push(obj.key.slice(prefix.length, -'.json'.length));
    }
    const limit = pLimit(READS);
    const read = await Promise.all(
      unitKeys.map((u) =>
        limit(async () => {
          try {
            return await this.read(u);
          } catch (err) {
            if (!onBad || !(err instanceof StateCorruptError)) throw err;
            onBad(u, err);
            return null;
          }
        }),
      ),
    );
    return new Map(unitKeys.flatMap((u, i) => (read[i] ? [[u, read[i]] as const] : [])));
  }

  /** The unit's manifest; null when it has none. */
  async read(unitKey: string): Promise<ReadManifest | null> {
    const key = this.manifestKey(unitKey);
    const got = await this.store.get(key);
    return got ? { manifest: parseManifest(key, got.body, unitKey), etag: got.etag } : null;
  }

  /**
   * The unit's live records by window key (each window as its manifest lists it), from `known` when
   * the caller has just read the manifest, else from a fresh read of it.
   */
  async records(unitKey: string, known?: ReadManifest): Promise<Map<string, WindowRecord>> {
    for (let attempt = 1; ; attempt++) {
      const current = attempt === 1 && known ? known : await this.read(unitKey);
      const cached = this.cache.get(unitKey);
      if (cached && cached.etag === (current?.etag ?? null)) return cached.records;
      try {
        const records = current ? await this.liveRecords(current.manifest) : new Map<string, WindowRecord>();
        this.remember(unitKey, current?.etag ?? null, records);
        return records;
      } catch (err) {
        // A segment merged away by another writer after the manifest was read: read the manifest again.
        if (!(err instanceof SegmentGoneError) || attempt >= FOLD_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * Folds committed windows into the unit's manifest: a new segment holds their records, the
   * manifest lists them (replacing the windows they overlap) and is rewritten only if no other
   * writer changed it since it was read (else read again and retried). Segments no longer listed
   * are deleted afterwards. Returns once the manifest holds the records; the markers are the caller's.
   */
  async fold(unitKey: string, records: readonly WindowRecord[], runId: string): Promise<void> {
    if (records.length === 0) return;
    this.guard();
    const added = await this.writeSegment(unitKey, [...records], runId);
    for (let attempt = 1; ; attempt++) {
      const current = (await this.read(unitKey)) ?? { manifest: emptyManifest(unitKey), etag: null };
      const windows = foldWindows(manifestWindows(current.manifest), records);
      const segments = [...current.manifest.segments, added];
      const merge = segmentsToMerge(segments);
      let written: SegmentRef[] = [];
      let dropped: SegmentRef[] = [];
      const next: StreamManifest = { format: 1, unit_key: unitKey, ...encodeWindows(windows), segments };
      try {
        if (merge > 1) {
          dropped = segments.slice(-merge);
          const merged = await this.mergeSegments(unitKey, next, dropped, runId);
          written = [merged];
          next.segments = [...segments.slice(0, -merge), merged];
        }
        this.guard();
        const key = this.manifestKey(unitKey);
        const body = JSON.stringify(next);
        await this.store.put(key, body, { contentType: 'application/json', ...this.unchangedSince(current.etag) });
        this.cache.delete(unitKey);
        const gone = dropped.map((s) => s.key);
        if (gone.length > 0) await this.store.deleteMany(gone);
        return;
      } catch (err) {
        // Only a refused rewrite leaves the merged segment unlisted: a rewrite that failed otherwise
        // (S3 gone before it answered) may have landed, listing it. Unlisted, it is only left over.
        if (written.length > 0 && err instanceof PreconditionFailedError) await this.store.deleteMany(written.map((s) => s.key));
        const retry = err instanceof PreconditionFailedError || err instanceof SegmentGoneError;
        if (!retry || attempt >= FOLD_ATTEMPTS) throw err;
      }
    }
  }

  /** Takes windows out of the unit's manifest (their records become dead; the files are the caller's). */
  async drop(unitKey: string, windows: readonly Interval[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.read(unitKey);
      if (!current) return;
      const gone = new Set(windows.map(windowKey));
      const kept = manifestWindows(current.manifest).filter((w) => !gone.has(windowKey(w)));
      this.guard();
      try {
        await this.store.put(
          this.manifestKey(unitKey),
          JSON.stringify({ ...current.manifest, ...encodeWindows(kept) } satisfies StreamManifest),
          { contentType: 'application/json', ...this.unchangedSince(current.etag) },
        );
        this.cache.delete(unitKey);
        return;
      } catch (err) {
        if (!(err instanceof PreconditionFailedError) || attempt >= FOLD_ATTEMPTS) throw err;
      }
    }
  }

  /** The condition of a manifest rewrite: no other writer changed (or created) it since it was read. */
  private unchangedSince(etag: string | null): { ifNoneMatch: '*' } | { ifMatch: string } {
    return etag === null ? { ifNoneMatch: '*' } : { ifMatch: etag };
  }

  private async writeSegment(unitKey: string, records: WindowRecord[], runId: string): Promise<SegmentRef> {
    const key = `${this.root}/segments/${unitKey}/${runId}-${randomUUID().slice(0, 8)}.json`;
    records.sort((a, b) => a.start - b.start);
    await this.store.put(key, JSON.stringify({ format: 1, unit_key: unitKey, records }), { contentType: 'application/json' });
    return { key, records: records.length };
  }

  /** One segment holding the live records of `from` (as `manifest` lists its windows). */
  private async mergeSegments(unitKey: string, manifest: StreamManifest, from: SegmentRef[], runId: string): Promise<SegmentRef> {
    const live = await this.liveRecords({ ...manifest, segments: from });
    return this.writeSegment(unitKey, [...live.values()], runId);
  }

  /** The records of the manifest's segments that it lists as live; a newer segment's record wins. */
  private async liveRecords(manifest: StreamManifest): Promise<Map<string, WindowRecord>> {
    const out = new Map<string, WindowRecord>();
    for (const ref of [...manifest.segments].reverse()) {
      const got = await this.store.get(ref.key);
      if (!got) throw new SegmentGoneError(ref.key);
      for (const rec of parseSegment(ref.key, got.body, manifest.unit_key).records) {
        const key = windowKey(rec);
        if (!out.has(key) && committedBy(manifest, rec) === rec.run_id) out.set(key, rec);
      }
    }
    return out;
  }

  private remember(unitKey: string, etag: string | null, records: Map<string, WindowRecord>): void {
    this.cache.delete(unitKey);
    this.cache.set(unitKey, { etag, records });
    while (this.cache.size > CACHED_UNITS) this.cache.delete(this.cache.keys().next().value!);
  }
}

/** A segment the manifest lists is gone: another writer merged it away after the manifest was read. */
class SegmentGoneError extends StateCorruptError {
  override name = 'SegmentGoneError';
  constructor(key: string) {
    super(key, 'listed by its unit manifest but absent (merged away by another writer, or deleted)');
  }
}
