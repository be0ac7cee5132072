import type { ObjectStore } from '../store/store.js';
import { StateCorruptError } from './errors.js';
import { parseWindowKey, windowKey, type Interval } from '../plan/index.js';

export type { Interval };

/**
 * Completed windows of a job, kept at the destination beside the data, so a container with an
 * empty disk resumes where the last run stopped.
 *
 * Layout under `_state/<job>/`:
 *   completed/<unitKey>/<start>_<end>.json   one immutable marker per exported window: its files
 *   pending/<unitKey>/<start>_<end>.json     keys about to be uploaded (written before the upload,
 *                                            removed after the completed marker): orphans of a crash
 *   reports/<runId>.json, last-run.json     run reports
 *
 * Commit protocol for one window: stage files locally -> write pending marker -> upload files ->
 * write completed marker -> delete pending marker. A crash at any point leaves either a completed
 * window or a pending marker whose keys the next run deletes before exporting the window again.
 */
export interface FileRecord {
  key: string;
  rows: number;
  bytes: number;
}

export interface WindowRecord {
  unit_key: string;
  start: number;
  end: number;
  rows: number;
  files: FileRecord[];
  run_id: string;
  completed_at: string;
}

function parseMarkerName(name: string): Interval | null {
  return name.endsWith('.json') ? parseWindowKey(name.slice(0, -'.json'.length)) : null;
}

export class WindowState {
  readonly root: string;

  constructor(
    readonly store: ObjectStore,
    readonly jobName: string,
  ) {
    this.root = `_state/${jobName}`;
  }

  completedKey(unitKey: string, start: number, end: number): string {
    return `${this.root}/completed/${unitKey}/${windowKey({ start, end })}.json`;
  }

  pendingKey(unitKey: string, start: number, end: number): string {
    return `${this.root}/pending/${unitKey}/${windowKey({ start, end })}.json`;
  }

  /** Every completed interval per unit key, from one listing (no object reads). */
  async completedIntervals(): Promise<Map<string, Interval[]>> {
    const prefix = `${this.root}/completed/`;
    const out = new Map<string, Interval[]>();
    for await (const obj of this.store.list(prefix)) {
      const rest = obj.key.slice(prefix.length);
      const slash = rest.lastIndexOf('/');
      const interval = parseMarkerName(rest.slice(slash + 1));
      if (slash < 0 || !interval) continue;
      const unitKey = rest.slice(0, slash);
      let list = out.get(unitKey);
      if (!list) out.set(unitKey, (list = []));
      list.push(interval);
    }
    for (const list of out.values()) list.sort((a, b) => a.start - b.start);
    return out;
  }

  async readCompleted(unitKey: string, start: number, end: number): Promise<WindowRecord | null> {
    return this.readJson<WindowRecord>(this.completedKey(unitKey, start, end));
  }

  /** Every completed window record (reads each marker: for verify and compaction, not for runs). */
  async *completedRecords(): AsyncGenerator<WindowRecord> {
    for await (const obj of this.store.list(`${this.root}/completed/`)) {
      if (!obj.key.endsWith('.json')) continue;
      const rec = await this.readJson<WindowRecord>(obj.key);
      if (rec) yield rec;
    }
  }

  async writePending(unitKey: string, start: number, end: number, keys: string[]): Promise<void> {
    await this.store.put(this.pendingKey(unitKey, start, end), JSON.stringify({ keys }), {
      contentType: 'application/json',
    });
  }

  async writeCompleted(record: WindowRecord): Promise<void> {
    await this.store.put(this.completedKey(record.unit_key, record.start, record.end), JSON.stringify(record), {
      contentType: 'application/json',
    });
    await this.store.delete(this.pendingKey(record.unit_key, record.start, record.end));
  }

  async deleteCompleted(unitKey: string, start: number, end: number): Promise<void> {
    await this.store.delete(this.completedKey(unitKey, start, end));
  }

  /**
   * Removes the files a crashed run may have uploaded without completing their windows, and the
   * pending markers themselves. Returns the data keys deleted. `ownsUnit` limits the cleanup to
   * some unit keys (a shard must not delete what another shard is uploading at the same time).
   */
  async cleanPending(ownsUnit: (unitKey: string) => boolean = () => true): Promise<string[]> {
    const pendingPrefix = `${this.root}/pending/`;
    const deleted: string[] = [];
    const markers: string[] = [];
    for await (const obj of this.store.list(pendingPrefix)) {
      const rest = obj.key.slice(pendingPrefix.length);
      if (!ownsUnit(rest.slice(0, Math.max(0, rest.lastIndexOf('/'))))) continue;
      const marker = await this.readJson<{ keys: string[] }>(obj.key);
      const keys = marker?.keys ?? [];
      if (!Array.isArray(keys)) throw new StateCorruptError(obj.key, '"keys" is not an array');
      // A crash after the completed marker but before the pending one was removed: those files are live.
      const completed = await this.readJson<WindowRecord>(`${this.root}/completed/${obj.key.slice(pendingPrefix.length)}`);
      const live = new Set(completed?.files.map((f) => f.key) ?? []);
      deleted.push(...keys.filter((k) => !live.has(k)));
      markers.push(obj.key);
    }
    if (deleted.length > 0) await this.store.deleteMany(deleted);
    if (markers.length > 0) await this.store.deleteMany(markers);
    return deleted;
  }

  /** `lastRunName`: the "latest report" object beside the reports (one per shard when sharded). */
  async writeReport(runId: string, report: unknown, lastRunName = 'last-run.json'): Promise<string> {
    const body = JSON.stringify(report, null, 2);
    const key = `${this.root}/reports/${runId}.json`;
    await this.store.put(key, body, { contentType: 'application/json' });
    await this.store.put(`${this.root}/${lastRunName}`, body, { contentType: 'application/json' });
    return key;
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
