/**
 * What the reorganisation check records at the destination (src/state/reorg-check.ts): the windows
 * of a unit found reorganised until all are exported again (`repair/<unitKey>.json`), and the
 * windows found still the chain's (`checked/<unitKey>.json`).
 */
import { StateCorruptError } from './errors.js';
import { windowKey, type Interval } from '../plan/index.js';
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

/** What a check records for a unit (WindowState.writeChecked adds the time). */
export type Checked = Omit<CheckedWindows, 'checked_at'>;

interface StillTheChainInput {
  sorted: Interval[];
  recorded: Map<string, CheckedWindow>;
  previous: CheckedWindows | null;
  floor: Checked['floor'];
  matched: { w: Interval; edge: BlockEdge }[];
  again: Interval[];
  proven: boolean;
  commitOf: (w: Interval) => string | undefined;
  newest: number | null;
  horizon: number;
}

/**
 * The windows to record as still the chain's: those whose edge matched now, and the recorded ones
 * a matching recorded edge proved; within the horizon, and always the newest of them (the next
 * check's first request). Undefined when that is what was recorded.
 */
export function stillTheChain(x: StillTheChainInput): Checked | undefined {
  const asked = new Map(x.matched.map((m) => [windowKey(m.w), m.edge]));
  const changed = new Set(x.again.map((w) => windowKey(w)));
  // Only windows asked now or recorded before can be recorded: not every window of the unit is visited.
  const candidates = [...x.matched.map((m) => m.w), ...(x.proven ? x.recorded.values() : [])];
  const seen = new Set<string>();
  const found: CheckedWindow[] = [];
  for (const w of candidates.sort((a, b) => a.start - b.start)) {
    const key = windowKey(w);
    if (seen.has(key) || !isOneOf(x.sorted, w)) continue;
    seen.add(key);
    const edge = asked.get(key) ?? (x.proven && !changed.has(key) ? x.recorded.get(key)?.edge : undefined);
    const commit = x.commitOf(w);
    if (edge && commit !== undefined) found.push({ start: w.start, end: w.end, commit, edge });
  }
  const kept = found.filter((c, i) => i === found.length - 1 || x.newest === null || x.newest - c.edge.block_number <= x.horizon);
  const before = x.previous?.windows ?? [];
  const same =
    kept.length === before.length &&
    kept.every((c, i) => c.start === before[i]!.start && c.end === before[i]!.end && c.commit === before[i]!.commit) &&
    x.floor?.end === x.previous?.floor?.end;
  return same ? undefined : { windows: kept, ...(x.floor ? { floor: x.floor } : {}) };
}

/** Whether `w` is one of the windows of `sorted` (sorted by start, disjoint). */
function isOneOf(sorted: readonly Interval[], w: Interval): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const m = sorted[mid]!;
    if (m.start === w.start) return m.end === w.end;
    if (m.start < w.start) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
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
