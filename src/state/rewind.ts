/**
 * `--rewind`: export the most recent windows again, against chain reorganisations deeper than the
 * safety lag. For every unit, each completed window that ends within `amount` of the unit's export
 * frontier (the newest completed end) is treated as not done, so the planner plans it again; the
 * new export replaces the old windows' files and markers (see WindowState's commit protocol).
 * Blocks for jobs windowed by block, a duration for jobs windowed by time.
 */
import { UserInputError } from '../errors.js';
import { datasetsWhere } from '../datasets/index.js';
import type { Interval } from '../plan/index.js';
import { isSnapshotStream, parseStreamKey } from '../plan/stream-key.js';
import { parseDurationSeconds } from '../settings/values.js';

export type Rewind = { axis: 'block'; amount: number; text: string } | { axis: 'time'; amount: number; text: string };

export class RewindError extends UserInputError {
  override name = 'RewindError';
}

/** "500" (blocks) or "6h", "1d", "90m" (a duration). */
export function parseRewind(input: string | number, where = '--rewind'): Rewind {
  const text = String(input).trim();
  if (/^\d+$/.test(text)) {
    const amount = Number(text);
    if (!Number.isSafeInteger(amount) || amount <= 0) {
      throw new RewindError(`${where} must be a number of blocks greater than 0, not ${text}`, {
        hint: 'e.g. --rewind 128 (blocks) or --rewind 6h (time)',
      });
    }
    return { axis: 'block', amount, text };
  }
  const d = parseDurationSeconds(text);
  if (!d.ok) {
    throw new RewindError(`${where} ${JSON.stringify(text)} ${d.problem}`, {
      hint: 'Write a number of blocks (--rewind 128) for jobs windowed by block, or a duration (--rewind 6h) for jobs windowed by time.',
    });
  }
  if (d.value <= 0) throw new RewindError(`${where} must be longer than 0`, { hint: 'e.g. --rewind 6h' });
  return { axis: 'time', amount: d.value, text };
}

/** The rewind must count what the job's windows count. */
export function checkRewindAxis(rewind: Rewind, jobAxis: 'block' | 'time' | null | undefined, jobFile?: string): void {
  if (!jobAxis) {
    throw new RewindError('--rewind needs a job with a range', {
      details: jobFile,
      hint: `Snapshot datasets (${datasetsWhere((c) => c.extent === 'snapshot').join(', ')}) are exported again by every run.`,
    });
  }
  if (rewind.axis !== jobAxis) {
    throw new RewindError(
      rewind.axis === 'block'
        ? `--rewind ${rewind.text} counts blocks but the job's windows are by time`
        : `--rewind ${rewind.text} is a duration but the job's windows are by block`,
      {
        details: jobFile,
        hint: jobAxis === 'block' ? 'Give a number of blocks, e.g. --rewind 128.' : 'Give a duration, e.g. --rewind 6h.',
      },
    );
  }
}

export interface Rewound {
  unitKey: string;
  /** Completed windows that will be exported again. */
  windows: Interval[];
}

/**
 * Completed intervals without the rewound windows, and what was rewound. Units of the other axis
 * and units of snapshot datasets (by time) are left alone.
 */
export function rewindCompleted(
  completed: ReadonlyMap<string, Interval[]>,
  rewind: Rewind,
): { completed: Map<string, Interval[]>; rewound: Rewound[] } {
  const out = new Map<string, Interval[]>();
  const rewound: Rewound[] = [];
  for (const [unitKey, intervals] of completed) {
    const unit = parseStreamKey(unitKey);
    if (unit?.axis !== rewind.axis || isSnapshotStream(unit) || intervals.length === 0) {
      out.set(unitKey, intervals);
      continue;
    }
    const frontier = Math.max(...intervals.map((i) => i.end));
    const cut = frontier - rewind.amount;
    const again = intervals.filter((i) => i.end > cut);
    out.set(
      unitKey,
      intervals.filter((i) => i.end <= cut),
    );
    if (again.length > 0) rewound.push({ unitKey, windows: again });
  }
  return { completed: out, rewound };
}
