/**
 * Stage 5 of a run, after the export: the windows it committed folded into their units' manifests,
 * uploads of unfinished windows removed, the replacement record settled, and the windows under
 * repair it exported again taken out of their repair records.
 */
import type { Logger } from '../log.js';
import type { Interval } from '../plan/index.js';
import type { Lease } from '../state/lease.js';
import { takeOutRepaired } from '../state/repair-record.js';
import type { Replacements } from '../state/replacement-record.js';
import type { WindowState } from '../state/window-state.js';
import type { Ownership } from './shard.js';

export interface AfterExport {
  state: WindowState;
  held: Pick<Lease, 'lost' | 'assertHeld'>;
  ownership: Ownership;
  /** Which pending markers this run may clean (see ownsMarker). */
  cleans: (unitKey: string, window: Interval | null) => boolean;
  repairs: Map<string, Interval[]>;
  replacements: Replacements;
  outcomes: { unitKey: string; start: number; end: number; status: string }[];
  logger: Logger;
}

/**
 * Uploads of unfinished windows removed now (not at the next run); the windows under repair this
 * run owns and exported again are taken out of their unit's repair record (the unit's lead deletes
 * a record left empty).
 */
export async function afterExport(a: AfterExport): Promise<void> {
  if (!a.held.lost.aborted) {
    await a.state
      .foldCommitted()
      .catch((err: Error) =>
        a.logger.warn({ err: err.message }, "windows not folded into their units' manifests; the next run folds them"),
      );
  }
  if (!a.held.lost.aborted) {
    await a.state
      .cleanPending(a.cleans)
      .catch((err: Error) => a.logger.warn({ err: err.message }, 'uploads of unfinished windows not removed; the next run removes them'));
  }
  if (a.held.lost.aborted) throw a.held.lost.reason;
  await a.replacements
    .settle(a.outcomes.filter((o) => o.status === 'done'))
    .catch((err: Error) =>
      a.logger.warn({ err: err.message }, 'replacement record not removed; the next run finds it done and removes it'),
    );
  for (const [unitKey, windows] of a.repairs) {
    if (!windows.some((w) => a.ownership.owns(unitKey, w)) && !a.ownership.leads(unitKey)) continue;
    const exportedAgain = (w: Interval) =>
      a.ownership.owns(unitKey, w) &&
      !a.outcomes.some((o) => o.unitKey === unitKey && o.start < w.end && w.start < o.end && o.status !== 'done');
    await takeOutRepaired(a.state, unitKey, {
      done: exportedAgain,
      lead: a.ownership.leads(unitKey),
      guard: () => a.held.assertHeld(),
    }).catch((err: Error) =>
      a.logger.warn({ unit: unitKey, err: err.message }, 'repair record not updated; the next run exports its windows again'),
    );
  }
}
