/**
 * A replacement (`--force`, `--rewind`, `--repair`, a reorganisation repair: any run exporting
 * again windows the state holds as completed) is recorded before it starts, so that a run that
 * replaced only some of them before it was stopped or killed (SIGKILL) is finished by the next
 * run, without the flag:
 *
 *   _state/<job>/replacing/<run id>.json   { run_id, reason, recorded_at, shard, windows: [{ unit_key, start, end, run_id }] }
 *
 * Each window is a completed interval as the state held it, with the run that exported it. The
 * replacement of a window is done once the state no longer holds that export: a replacement's
 * commit replaces the completed intervals it overlaps whole (src/state/window-state.ts), and its
 * run is another. Until then the window is pending, and every later run takes it out of the
 * completed windows, so the planner exports it again (whole: src/plan/whole-replacements.ts). A
 * compaction's merge of pending windows keeps their rows under its own run id: such an interval
 * is pending too. Shards need nothing of their own: a record holds the windows of the run (shard)
 * that wrote it, each run plans every pending window and exports those its split gives it, and a
 * record is deleted by the run that finds none of its windows pending any more (at its start, or
 * at its end when it exported them all).
 */
import pLimit from 'p-limit';
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import { StateCorruptError } from './errors.js';
import { isCompactionRunId } from './run-id.js';
import type { WindowState } from './window-state.js';

/** A completed window to be replaced: the unit's interval and the run whose export of it is replaced. */
export interface ReplacedWindow {
  unit_key: string;
  start: number;
  end: number;
  run_id: string;
}

export interface ReplacementRecord {
  /** The run that started the replacement. */
  run_id: string;
  /** Why: "force", "rewind", "repair", "reorganisation" (several: joined by "+"). */
  reason: string;
  recorded_at: string;
  /** "i/N" when a shard recorded it (its windows only). */
  shard: string | null;
  windows: ReplacedWindow[];
}

/** Why a run exports completed windows again: its flags, and reorganisations under repair. */
export function replacementReason(flags: { force?: boolean; rewind?: unknown; repair?: boolean }, reorganised: boolean): string {
  const reasons = [flags.force && 'force', flags.rewind && 'rewind', flags.repair && 'repair', reorganised && 'reorganisation'];
  return reasons.filter((r): r is string => typeof r === 'string').join('+') || 'replacement';
}

/** Window lookups at once (a record of many units reads their manifests once each, cached). */
const LOOKUPS = 16;

const overlaps = (a: Interval, b: Interval) => a.start < b.end && b.start < a.end;

/** The run that committed a completed interval of a unit (null: the state holds no such interval). */
async function committedBy(state: WindowState, unitKey: string, w: Interval): Promise<string | null> {
  const name = state.commitOf(unitKey, w.start, w.end);
  if (name?.startsWith('run ')) return name.slice('run '.length);
  return (await state.readCompleted(unitKey, w.start, w.end))?.run_id ?? null;
}

function checked(key: string, body: unknown): ReplacementRecord {
  const r = body as Partial<ReplacementRecord> | null;
  const ok =
    r !== null &&
    typeof r === 'object' &&
    typeof r.run_id === 'string' &&
    Array.isArray(r.windows) &&
    r.windows.every(
      (w) =>
        typeof w?.unit_key === 'string' && Number.isSafeInteger(w.start) && Number.isSafeInteger(w.end) && typeof w.run_id === 'string',
    );
  if (!ok) throw new StateCorruptError(key, 'not a replacement record: {run_id, windows: [{unit_key, start, end, run_id}]}');
  return r as ReplacementRecord;
}

export interface ReplacementsOptions {
  logger: Logger;
  /** Called before every write; throws to stop a run that may no longer write (lost lease). */
  guard: () => void;
  /** False for a dry run: records are read, never written nor deleted. */
  write: boolean;
  /** The run, and its shard (null: the whole job). */
  runId: string;
  shard: { index: number; count: number } | null;
}

/** The records of one run: those it resumes, and its own. */
export class Replacements {
  /** Records whose windows this run may finish, with the windows still pending. */
  private readonly open: { key: string; pending: ReplacedWindow[] }[] = [];
  /** Completed windows taken out to be exported again. */
  resumed = 0;

  constructor(
    private readonly state: WindowState,
    private readonly opts: ReplacementsOptions,
  ) {}

  private get prefix(): string {
    return `${this.state.root}/replacing/`;
  }

  /**
   * `completed` without the windows of interrupted replacements still pending (`listed`: every
   * completed interval of the state). Records with none left pending are deleted.
   */
  async resume(completed: Map<string, Interval[]>, listed: ReadonlyMap<string, Interval[]>): Promise<Map<string, Interval[]>> {
    const takeOut = new Map<string, Interval[]>();
    for await (const obj of this.state.store.list(this.prefix, { etags: false })) {
      if (!obj.key.endsWith('.json')) continue;
      const got = await this.state.store.get(obj.key);
      if (!got) continue;
      let body: unknown;
      try {
        body = JSON.parse(got.body.toString('utf8'));
      } catch (err) {
        throw new StateCorruptError(obj.key, `not valid JSON (${(err as Error).message})`);
      }
      const record = checked(obj.key, body);
      const pending = await this.pendingOf(record, listed, takeOut);
      if (pending.length > 0) {
        this.open.push({ key: obj.key, pending });
        this.opts.logger.warn(
          { run: record.run_id, reason: record.reason, recorded_at: record.recorded_at, shard: record.shard, windows: pending.length },
          'an interrupted replacement is finished: its windows not replaced yet are exported again',
        );
      } else if (this.opts.write) {
        this.opts.guard();
        await this.state.store.delete(obj.key);
      }
    }
    const out = new Map<string, Interval[]>();
    for (const [unitKey, list] of completed) {
      const stale = takeOut.get(unitKey) ?? [];
      const kept = list.filter((iv) => !stale.some((s) => overlaps(s, iv)));
      this.resumed += list.length - kept.length;
      out.set(unitKey, kept);
    }
    return out;
  }

  /** The record's windows whose export the state still holds (or a compaction merged), adding what holds them to `takeOut`. */
  private async pendingOf(
    record: ReplacementRecord,
    listed: ReadonlyMap<string, Interval[]>,
    takeOut: Map<string, Interval[]>,
  ): Promise<ReplacedWindow[]> {
    const lookups = pLimit(LOOKUPS);
    const pending: ReplacedWindow[] = [];
    await Promise.all(
      record.windows.map((w) =>
        lookups(async () => {
          const holding = (listed.get(w.unit_key) ?? []).filter((iv) => overlaps(iv, w));
          const stale: Interval[] = [];
          for (const iv of holding) {
            const run = await committedBy(this.state, w.unit_key, iv);
            if (run !== null && (run === w.run_id || isCompactionRunId(run))) stale.push(iv);
          }
          if (stale.length === 0) return;
          pending.push(w);
          takeOut.set(w.unit_key, [...(takeOut.get(w.unit_key) ?? []), ...stale]);
        }),
      ),
    );
    return pending;
  }

  /**
   * Records, before the first commit, the completed intervals `planned` windows replace (none: no
   * record). `listed`: every completed interval of the state when the run planned.
   */
  async record(
    reason: string,
    planned: readonly ({ unitKey: string } & Interval)[],
    listed: ReadonlyMap<string, Interval[]>,
  ): Promise<void> {
    const replaced = new Map<string, { unitKey: string; window: Interval }>();
    for (const p of planned)
      for (const iv of (listed.get(p.unitKey) ?? []).filter((e) => overlaps(e, p)))
        replaced.set(`${p.unitKey}|${iv.start}|${iv.end}`, { unitKey: p.unitKey, window: iv });
    if (replaced.size === 0 || !this.opts.write) return;
    const lookups = pLimit(LOOKUPS);
    const windows = (
      await Promise.all(
        [...replaced.values()].map(({ unitKey, window }) =>
          lookups(async () => {
            const by = await committedBy(this.state, unitKey, window);
            return by === null ? [] : [{ unit_key: unitKey, start: window.start, end: window.end, run_id: by }];
          }),
        ),
      )
    ).flat();
    if (windows.length === 0) return;
    const { runId, shard } = this.opts;
    const record: ReplacementRecord = {
      run_id: runId,
      reason,
      recorded_at: new Date().toISOString(),
      shard: shard ? `${shard.index}/${shard.count}` : null,
      windows: windows.sort((a, b) => (a.unit_key < b.unit_key ? -1 : a.unit_key > b.unit_key ? 1 : a.start - b.start)),
    };
    const key = `${this.prefix}${runId}.json`;
    this.opts.guard();
    await this.state.store.put(key, JSON.stringify(record), { contentType: 'application/json' });
    this.open.push({ key, pending: windows });
    this.opts.logger.info({ reason, windows: windows.length }, 'replacement recorded before it starts');
  }

  /** The run report's figure: completed windows of interrupted replacements taken out to be exported again. */
  reported(): { windows_resumed?: number } {
    return this.resumed > 0 ? { windows_resumed: this.resumed } : {};
  }

  /** At the end of the run: records whose pending windows this run all exported again (`done`) are deleted. */
  async settle(done: readonly ({ unitKey: string } & Interval)[]): Promise<void> {
    const byStream = new Map<string, Interval[]>();
    for (const d of done) byStream.set(d.unitKey, [...(byStream.get(d.unitKey) ?? []), d]);
    const covered = (w: ReplacedWindow) => {
      let at = w.start;
      for (const d of [...(byStream.get(w.unit_key) ?? [])].sort((a, b) => a.start - b.start)) if (d.start <= at && d.end > at) at = d.end;
      return at >= w.end;
    };
    for (const r of this.open) {
      if (!r.pending.every(covered)) continue;
      this.opts.guard();
      await this.state.store.delete(r.key);
    }
  }
}
