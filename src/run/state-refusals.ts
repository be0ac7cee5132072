/**
 * The refusals that follow from the job's state at the destination, made read-only before a run
 * takes its lease (src/run/open-run.ts), so a run refused for them writes nothing: a destination
 * holding another format (DestinationFormatError) and a target's changed query whose rows would
 * land beside the old query's in one table (TableQueryChangedError). The run checks both again
 * under its lease (src/run/read-state.ts, src/run/run-plan.ts), as another run may have written
 * meanwhile. Costs one more read of the completed windows (one list and a get per unit).
 */
import { isSnapshot } from '../datasets/index.js';
import type { Job } from '../job/schema.js';
import { merge, subtract, type Interval } from '../plan/intervals.js';
import { parseStreamKey } from '../plan/stream-key.js';
import type { Stream } from '../plan/streams.js';
import type { OutputFormat } from '../sink/sink.js';
import { DestinationFormatError, heldFormat } from '../state/destination-format.js';
import type { WindowState } from '../state/window-state.js';
import { checkJobTableQueries, type JobTable } from './tables.js';

export async function refuseAtState(
  state: WindowState,
  job: Job,
  use: { streams: readonly Readonly<Stream>[]; tables: readonly JobTable[] },
  output: { format: OutputFormat; partitioning: string },
  force: boolean,
): Promise<void> {
  const listed = await state.completedIntervals();
  if (listed.size === 0) return;
  if (!force) {
    const holds = await heldFormat(state, listed);
    if (holds && holds !== output.format) throw new DestinationFormatError(state.store.location, job.name, holds, output.format);
  }
  const planned = use.streams.flatMap((s) => rangeLeft(job, s, listed).map((w) => ({ unitKey: s.unitKey, start: w.start, end: w.end })));
  await checkJobTableQueries(state, job, use.tables, { completed: listed, planned }, output.partitioning);
}

/**
 * What a run of the job exports of a stream sooner or later: its range less its completed windows.
 * A range to `latest` is taken up to the newest window state holds on the stream's chain and axis
 * (a changed query can clash only with windows exported already); snapshots are left to the run.
 */
function rangeLeft(job: Job, stream: Readonly<Stream>, listed: ReadonlyMap<string, readonly Interval[]>): Interval[] {
  const range = job.range;
  if (!range || isSnapshot(stream.dataset)) return [];
  let end = range.to === 'latest' ? -Infinity : range.to;
  if (range.to === 'latest')
    for (const [unitKey, windows] of listed) {
      const key = parseStreamKey(unitKey);
      if (key?.chainId === stream.chainId && key.axis === range.by) for (const w of windows) end = Math.max(end, w.end);
    }
  if (!(end > range.from)) return [];
  return subtract([{ start: range.from, end }], merge(listed.get(stream.unitKey) ?? []));
}
