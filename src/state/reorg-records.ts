/**
 * What the reorganisation check records at the destination (src/state/reorg-check.ts): the windows
 * of a unit found reorganised until all are exported again (`repair/<unitKey>.json`), and the
 * windows found still the chain's (`checked/<unitKey>.json`).
 */
import { StateCorruptError } from './errors.js';
import type { Interval } from '../plan/index.js';
import type { ObjectStore } from '../store/store.js';
import type { BlockEdge } from './window-record.js';
import { readStateJson } from './completed-windows.js';

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

export class ReorgRecords {
  constructor(
    readonly store: ObjectStore,
    readonly root: string,
    private readonly guard: () => void,
  ) {}

  /** Where a unit's repair record lives (see pendingRepairs). */
  repairKey(unitKey: string): string {
    return `${this.root}/repair/${unitKey}.json`;
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

  private readJson<T>(key: string): Promise<T | null> {
    return readStateJson<T>(this.store, key);
  }
}
