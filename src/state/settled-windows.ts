/**
 * What settling found (src/run/settle.ts), per unit:
 *
 *   _state/<job>/settled/<unitKey>.json   { format: 1, unit_key, settled, recounted }, each a list
 *                                         of windows in the run-length form of the unit's manifest
 *                                         ({ runs, windows: [start, width, count, run] })
 *
 * - settled: windows a later run recounted equal to the service's count once their block time was
 *   older than the settle horizon: no run recounts them again;
 * - recounted: windows a later run recounted equal while their block time was within the horizon:
 *   recounted again (and then settled) by the first run after it is older than the horizon.
 *
 * Each window is named by the run that committed it, as the unit's manifest names it: a window
 * exported again since (a recount that differed, a repair, --rewind, --force) is another commit, on
 * neither list until a later run recounts it. Shards write the windows they own into one record
 * per unit with conditional writes (`If-Match` on the ETag read, `If-None-Match: *` for the
 * first), so none loses another's. A unit without a record (a destination written before settling
 * existed) has nothing settled: its next run recounts every window once.
 */
import { PreconditionFailedError } from '../store/errors.js';
import type { ObjectStore } from '../store/store.js';
import { windowKey } from '../plan/index.js';
import { encodeWindows, manifestWindows, type ManifestWindow, type WindowRun } from './stream-manifest.js';

/** Windows with the run that committed each: runs[run] of [start, width, count, run], `count` consecutive windows of `width` from `start`. */
export interface RunWindows {
  runs: string[];
  windows: WindowRun[];
}

export interface SettledRecord {
  format: 1;
  unit_key: string;
  settled: RunWindows;
  recounted: RunWindows;
}

/** A unit's record as read: for each list, window key -> the run that committed it. */
export interface SettledRead {
  settled: Map<string, string>;
  recounted: Map<string, string>;
  etag: string | null;
  /** Why the record was not used (not valid JSON, not a record of the unit): everything in it is recounted. */
  problem?: string;
}

/** What a run adds to a unit's record. */
export interface SettledUpdate {
  settled: readonly ManifestWindow[];
  recounted: readonly ManifestWindow[];
}

/** Attempts of a record write that lost a race with another writer of the unit (a shard). */
const WRITE_ATTEMPTS = 16;

export class SettledWindows {
  constructor(
    private readonly store: ObjectStore,
    /** `_state/<job>`. */
    private readonly root: string,
    /** Called before every write; throws to stop a run that may no longer write (lost lease). */
    private readonly guard: () => void = () => undefined,
  ) {}

  key(unitKey: string): string {
    return `${this.root}/settled/${unitKey}.json`;
  }

  /** The unit's record (empty when it has none, or one that is not a record: see `problem`). */
  async read(unitKey: string): Promise<SettledRead> {
    const got = await this.store.get(this.key(unitKey));
    if (!got) return { settled: new Map(), recounted: new Map(), etag: null };
    const parsed = parseSettled(got.body, unitKey);
    if (typeof parsed === 'string') return { settled: new Map(), recounted: new Map(), etag: got.etag, problem: parsed };
    const byKey = (list: RunWindows) => new Map(manifestWindows(list).map((w) => [windowKey(w), w.run_id]));
    return { settled: byKey(parsed.settled), recounted: byKey(parsed.recounted), etag: got.etag };
  }

  /**
   * Adds windows of the unit (each with the run that committed it) to its lists. The windows
   * recorded before stay where `keep` says so (a window exported again since is dropped); a window
   * added replaces every recorded one it overlaps, on either list.
   */
  async update(unitKey: string, add: SettledUpdate, keep: (w: ManifestWindow) => boolean): Promise<void> {
    const added = [...add.settled, ...add.recounted];
    const stays = (w: ManifestWindow) => keep(w) && !added.some((a) => a.start < w.end && w.start < a.end);
    const merged = (old: ManifestWindow[], fresh: readonly ManifestWindow[]) =>
      encodeWindows([...old.filter(stays), ...fresh].sort((a, b) => a.start - b.start));
    for (let attempt = 1; ; attempt++) {
      const got = await this.store.get(this.key(unitKey));
      const before = got ? parseSettled(got.body, unitKey) : null;
      const old = (list: 'settled' | 'recounted') => (before && typeof before !== 'string' ? manifestWindows(before[list]) : []);
      const record: SettledRecord = {
        format: 1,
        unit_key: unitKey,
        settled: merged(old('settled'), add.settled),
        recounted: merged(old('recounted'), add.recounted),
      };
      this.guard();
      try {
        await this.store.put(this.key(unitKey), JSON.stringify(record), {
          contentType: 'application/json',
          ...(got ? { ifMatch: got.etag } : { ifNoneMatch: '*' as const }),
        });
        return;
      } catch (err) {
        if (!(err instanceof PreconditionFailedError) || attempt >= WRITE_ATTEMPTS) throw err;
      }
    }
  }
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/** The record in `body`, or why it is not one of `unitKey`. */
function parseSettled(body: Buffer, unitKey: string): SettledRecord | string {
  let r: Partial<SettledRecord> | null;
  try {
    r = JSON.parse(body.toString('utf8')) as Partial<SettledRecord> | null;
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  const ok =
    r !== null && typeof r === 'object' && r.format === 1 && r.unit_key === unitKey && isRunWindows(r.settled) && isRunWindows(r.recounted);
  return ok ? (r as SettledRecord) : `not a settled record of unit ${unitKey} (format 1: settled, recounted)`;
}

function isRunWindows(l: Partial<RunWindows> | undefined): l is RunWindows {
  return (
    typeof l === 'object' &&
    l !== null &&
    Array.isArray(l.runs) &&
    l.runs.every((x) => typeof x === 'string') &&
    Array.isArray(l.windows) &&
    l.windows.every(
      (w) => Array.isArray(w) && w.length === 4 && w.every(isInt) && w[1] > 0 && w[2] > 0 && w[3] >= 0 && w[3] < l.runs!.length,
    )
  );
}
