/**
 * A unit's repair record (`_state/<job>/repair/<unit key>.json`, see WindowState.pendingRepairs)
 * shrinks as its windows are exported again: each run takes out the windows it exported again, so
 * when shards divide a unit's windows each shard takes out its own. The record is rewritten with
 * If-Match on the ETag read, so shards taking windows out at once never put back each other's.
 * Only the unit's lead adds windows (it checks the unit's edges), so only the lead deletes a
 * record left empty; another shard leaves it empty (`{ "windows": [] }`, which repairs nothing).
 */
import { PreconditionFailedError } from '../store/errors.js';
import type { Interval } from '../plan/index.js';
import { StateCorruptError } from './errors.js';
import type { WindowState } from './window-state.js';

const ATTEMPTS = 20;

export interface RepairedWindows {
  /** Whether a window of the record was exported again by this run. */
  done: (window: Interval) => boolean;
  /** This run leads the unit: it deletes the record once no window is left. */
  lead: boolean;
  /** Called before every write; throws to stop a run that may no longer write (lost lease). */
  guard: () => void;
}

export async function takeOutRepaired(state: WindowState, unitKey: string, r: RepairedWindows): Promise<void> {
  const key = state.repairKey(unitKey);
  for (let attempt = 1; ; attempt++) {
    const obj = await state.store.get(key);
    if (!obj) return;
    let windows: Interval[];
    try {
      windows = (JSON.parse(obj.body.toString('utf8')) as { windows: Interval[] }).windows;
    } catch (err) {
      throw new StateCorruptError(key, `not valid JSON (${(err as Error).message})`);
    }
    if (!Array.isArray(windows)) throw new StateCorruptError(key, '"windows" is not a list of {start, end}');
    const left = windows.filter((w) => !r.done(w));
    r.guard();
    if (left.length === 0 && r.lead) return state.store.delete(key);
    if (left.length === windows.length) return;
    try {
      await state.store.put(key, JSON.stringify({ windows: left.map((w) => ({ start: w.start, end: w.end })) }), {
        contentType: 'application/json',
        ifMatch: obj.etag,
      });
      return;
    } catch (err) {
      if (!(err instanceof PreconditionFailedError) || attempt >= ATTEMPTS) throw err;
    }
  }
}
