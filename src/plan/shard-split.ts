/**
 * How N shards divide a job's windows: each unit's windows are cut into contiguous parts, one per
 * shard, balanced by expected rows (by window length where no density is known), so a job of a few
 * busy units still keeps every shard busy.
 *
 * A split holds, per unit key, spans [start, end) of the unit's axis; a span's parts each name the
 * shard that owns the windows starting in it (a part runs from its `start` to the next part's, the
 * last to the span's end). A window belongs to the part its start falls in: one owner per window,
 * whatever the chunk. Spans never overlap and never change once recorded
 * (src/state/shard-split-record.ts keeps them at the destination), so shards that planned at
 * different times, or saw different heads, still give every window the same owner; windows no span
 * covers yet (the first run, a range moved forward, the newest windows of `to: latest`) get new
 * spans, divided over the shards again.
 */
import type { Plan, PlannedWindow } from './plan.js';
import { length, type Interval } from './intervals.js';
import { keyAcrossChains, parseStreamKey, shardOfStreamKey } from './stream-key.js';

export interface SplitPart {
  start: number;
  shard: number;
}

export interface SplitSpan {
  start: number;
  end: number;
  /** In order of `start`; the first starts at the span's start. */
  parts: SplitPart[];
}

export interface ShardSplit {
  /** The number of shards the spans divide windows between. */
  count: number;
  /** By unit key, in order of `start`. */
  units: Record<string, SplitSpan[]>;
}

/** Windows of units a split is to cover: a plan's, or completed ones. */
export interface PlannedWindows {
  units: readonly Pick<PlannedWindow, 'unitKey' | 'window'>[];
}

/** Expected rows of a window of a unit; undefined when unknown. */
export type ExpectedRows = (unitKey: string, window: Interval) => number | undefined;

export function emptySplit(count: number): ShardSplit {
  return { count, units: {} };
}

/** The shard owning the window of a unit that starts at `start`; null when no span covers it. */
export function ownerOf(split: ShardSplit, unitKey: string, start: number): number | null {
  const span = spansOf(split, unitKey).find((s) => s.start <= start && start < s.end);
  if (!span) return null;
  let owner = span.parts[0]!.shard;
  for (const p of span.parts) if (p.start <= start) owner = p.shard;
  return owner;
}

/**
 * The shard that does a unit's own work (its reorganisation check, its `checked/` and `repair/`
 * records): the one the unit key's hash names, so it never changes while the unit grows.
 */
export function leadShardOf(unitKey: string, count: number): number {
  return shardOfStreamKey(unitKey, count);
}

/**
 * Contiguous parts of `windows` (sorted, of one unit) for `count` shards, balanced by `weights`:
 * a window goes to the part its weight's midpoint falls in, so each part holds about 1/count of
 * the total. Part j goes to shard (j + offset) % count; parts without a window are left out.
 */
export function divideWindows(windows: readonly Interval[], weights: readonly number[], count: number, offset: number): SplitPart[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const parts: SplitPart[] = [];
  let before = 0;
  let lastPart = -1;
  windows.forEach((w, i) => {
    const weight = weights[i]!;
    const part =
      total > 0 ? Math.min(count - 1, Math.floor((count * (before + weight / 2)) / total)) : Math.floor((count * i) / windows.length);
    before += weight;
    if (part !== lastPart) parts.push({ start: w.start, shard: (part + offset) % count });
    lastPart = part;
  });
  return parts;
}

/**
 * New spans for the plan's windows that no span of `split` covers, by unit: one span per run of
 * such windows with no recorded span between them. The units of one query on several chains are
 * cut at the same points (their windows' expected rows, or lengths, added up per window), so the
 * same window of every chain goes to one shard and the chains still share its requests.
 */
export function uncoveredSpans(split: ShardSplit, plan: PlannedWindows, expected?: ExpectedRows): Record<string, SplitSpan[]> {
  const byStream = new Map<string, Interval[]>();
  for (const u of plan.units) {
    if (ownerOf(split, u.unitKey, u.window.start) !== null) continue;
    let list = byStream.get(u.unitKey);
    if (!list) byStream.set(u.unitKey, (list = []));
    list.push(u.window);
  }
  const byQuery = new Map<string, string[]>();
  for (const unitKey of byStream.keys()) {
    const parsed = parseStreamKey(unitKey);
    const query = parsed ? keyAcrossChains(parsed) : unitKey;
    byQuery.set(query, [...(byQuery.get(query) ?? []), unitKey]);
  }
  const added = new Map<string, SplitSpan[]>();
  for (const [query, unitKeys] of byQuery) {
    const shardAt = queryCuts(
      unitKeys.map((k) => [k, byStream.get(k)!] as const),
      split.count,
      leadShardOf(query, split.count),
      expected,
    );
    for (const unitKey of unitKeys) added.set(unitKey, unitSpans(spansOf(split, unitKey), byStream.get(unitKey)!, shardAt));
  }
  return Object.fromEntries(added);
}

/** The shard of each window start of a query's units: their windows divided as one sequence. */
function queryCuts(
  units: readonly (readonly [string, Interval[]])[],
  count: number,
  offset: number,
  expected?: ExpectedRows,
): (start: number) => number {
  const known =
    units.every(([k, ws]) => ws.every((w) => (expected?.(k, w) ?? -1) >= 0)) &&
    units.some(([k, ws]) => ws.some((w) => expected!(k, w)! > 0));
  const weights = new Map<number, number>();
  for (const [k, ws] of units)
    for (const w of ws) weights.set(w.start, (weights.get(w.start) ?? 0) + (known ? expected!(k, w)! : length(w)));
  const starts = [...weights.keys()].sort((a, b) => a - b);
  const parts = divideWindows(
    starts.map((start) => ({ start, end: start })),
    starts.map((start) => weights.get(start)!),
    count,
    offset,
  );
  return (start) => {
    let shard = parts[0]!.shard;
    for (const p of parts) if (p.start <= start) shard = p.shard;
    return shard;
  };
}

/** A unit's new spans for its uncovered windows (sorted here), each window's part from `shardAt`. */
function unitSpans(recorded: SplitSpan[], windows: Interval[], shardAt: (start: number) => number): SplitSpan[] {
  windows.sort((a, b) => a.start - b.start);
  const groups: Interval[][] = [];
  for (const w of windows) {
    const group = groups.at(-1);
    const last = group?.at(-1);
    // A window after a recorded span starts a new span: spans never overlap.
    if (group && last && !recorded.some((s) => s.start >= last.end && s.start <= w.start) && w.start >= last.end) group.push(w);
    else groups.push([w]);
  }
  return groups.map((group) => {
    const start = group[0]!.start;
    // A recorded span may start inside the last window (the chunk changed): the new span stops there.
    const next = Math.min(...recorded.filter((s) => s.start > start).map((s) => s.start));
    const parts: SplitPart[] = [];
    for (const w of group) {
      const shard = shardAt(w.start);
      if (parts.at(-1)?.shard !== shard) parts.push({ start: parts.length === 0 ? start : w.start, shard });
    }
    return { start, end: Math.min(group.at(-1)!.end, next), parts };
  });
}

/** `split` with `added` spans (from uncoveredSpans). */
export function withSpans(split: ShardSplit, added: Record<string, SplitSpan[]>): ShardSplit {
  const units = new Map(Object.entries(split.units));
  for (const [unitKey, spans] of Object.entries(added))
    units.set(
      unitKey,
      [...(units.get(unitKey) ?? []), ...spans].sort((a, b) => a.start - b.start),
    );
  return { count: split.count, units: Object.fromEntries(units) };
}

const spansOf = (split: ShardSplit, unitKey: string): SplitSpan[] => (Object.hasOwn(split.units, unitKey) ? split.units[unitKey]! : []);

/** Whether a shard exports a window: its owner's, or, for a window no span covers, the unit's lead's. */
export function shardOwnsWindow(split: ShardSplit, index: number, unitKey: string, window: Interval | null): boolean {
  const owner = window === null ? null : ownerOf(split, unitKey, window.start);
  return (owner ?? leadShardOf(unitKey, split.count)) === index;
}

/**
 * The windows of one shard out of `split.count` (Kubernetes indexed jobs, AWS Batch array jobs):
 * those whose span part names it. Windows no span covers belong to no shard (see uncoveredSpans).
 * The coverage keeps the units the shard exports a window of or leads.
 */
export function selectShard(plan: Plan, split: ShardSplit, index: number): Plan {
  const { count } = split;
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index) || index < 0 || index >= count) {
    throw new RangeError(`shard ${index} of ${count} is not valid`);
  }
  const units = plan.units.filter((u) => ownerOf(split, u.unitKey, u.window.start) === index);
  const exported = new Set(units.map((u) => u.unitKey));
  const coverage = plan.coverage.filter((c) => exported.has(c.unitKey) || leadShardOf(c.unitKey, count) === index);
  return { ...plan, units, coverage };
}

/** What each shard of a split exports of a plan: windows, and expected rows when every window's is known. */
export interface ShardLoad {
  shard: number;
  windows: number;
  expected_rows: number | null;
}

export function shardLoads(plan: Pick<Plan, 'units'>, split: ShardSplit, expected?: ExpectedRows): ShardLoad[] {
  const loads: ShardLoad[] = Array.from({ length: split.count }, (_, shard) => ({ shard, windows: 0, expected_rows: 0 }));
  for (const u of plan.units as PlannedWindow[]) {
    const owner = ownerOf(split, u.unitKey, u.window.start);
    if (owner === null) continue;
    const load = loads[owner]!;
    load.windows += 1;
    const rows = expected?.(u.unitKey, u.window);
    load.expected_rows = rows === undefined || load.expected_rows === null ? null : load.expected_rows + rows;
  }
  return loads;
}
