/**
 * The windows not settled (src/run/settle.ts): the completed windows of the job's paged units that
 * their unit's settled record does not name as settled with the run that committed them. A run
 * recounts those never recounted since their commit, and those recounted once whose block time is
 * older than the horizon now. What `plan` and `run --dry-run` show, and what a run asks the
 * service to count.
 */
import pLimit from 'p-limit';
import { DATASETS } from '../datasets/index.js';
import type { Job } from '../job/schema.js';
import { keyAcrossChains, parseStreamKey, windowKey, type Interval } from '../plan/index.js';
import { jobStreams } from '../plan/streams.js';
import { chainRequests } from '../source/query.js';
import { SettledWindows } from '../state/settled-windows.js';
import type { WindowState } from '../state/window-state.js';

export interface PendingWindow extends Interval {
  unit_key: string;
  /** The run that committed the window, as the unit's manifest names it (undefined: a marker not folded yet). */
  run_id: string | undefined;
  /** An earlier run recounted it equal within the horizon: recounted again once it is older. */
  recounted: boolean;
}

export interface PendingSettle {
  /** Windows to recount, by unit key, in start order. */
  windows: PendingWindow[];
  /** Units whose settled record could not be used (its windows are all recounted), with why. */
  unreadable: { unit: string; problem: string }[];
  /** The settled records read (for the write after the recount). */
  records: SettledWindows;
  /** Per unit, the record as read (window key -> run, on each list). */
  read: Map<string, { settled: Map<string, string>; recounted: Map<string, string> }>;
}

/** Settled records read at once. */
const READS = 16;

/**
 * The windows of `completed` this run owns and recounts: of units the job has whose dataset's rows
 * are the service's rows one for one (paged), not settled by the run that committed them.
 */
export async function pendingSettle(
  job: Job,
  state: WindowState,
  completed: ReadonlyMap<string, readonly Interval[]>,
  owns: (unitKey: string, window: Interval) => boolean,
  guard?: () => void,
): Promise<PendingSettle> {
  const paged = new Set(jobStreams(job).flatMap((s) => (DATASETS[s.dataset].collection.kind === 'paged' ? [s.unitKey] : [])));
  const records = new SettledWindows(state.store, state.root, guard);
  const byStream: PendingSettle['read'] = new Map();
  const unreadable: PendingSettle['unreadable'] = [];
  const units = [...completed].filter(([unitKey, list]) => paged.has(unitKey) && list.some((w) => owns(unitKey, w)));
  const limit = pLimit(READS);
  const reads = await Promise.all(units.map(([unitKey]) => limit(() => records.read(unitKey))));
  const windows: PendingWindow[] = [];
  units.forEach(([unitKey, list], i) => {
    const read = reads[i]!;
    byStream.set(unitKey, read);
    if (read.problem) unreadable.push({ unit: unitKey, problem: read.problem });
    for (const w of list) {
      if (!owns(unitKey, w)) continue;
      const run_id = runOf(state.commitOf(unitKey, w.start, w.end));
      if (run_id !== undefined && read.settled.get(windowKey(w)) === run_id) continue;
      const recounted = run_id !== undefined && read.recounted.get(windowKey(w)) === run_id;
      windows.push({ unit_key: unitKey, start: w.start, end: w.end, run_id, recounted });
    }
  });
  return { windows, unreadable, records, read: byStream };
}

/** The run a commit name (WindowState.commitOf) names; undefined for a marker's. */
function runOf(commit: string | undefined): string | undefined {
  return commit?.startsWith('run ') ? commit.slice('run '.length) : undefined;
}

/**
 * The count requests recounting `windows` takes: one per window and target for up to
 * `chainsPerRequest` chains (source.chain_ids_per_request)
 * (the chains that share the window share the request), and one more per dataset whose route may
 * count in halves (asked first, for one chain). A route found to count in halves asks per chain.
 */
export function countRequests(windows: readonly { unit_key: string; start: number; end: number }[], chainsPerRequest: number): number {
  const groups = new Map<string, number>();
  const probes = new Set<string>();
  for (const w of windows) {
    const unit = parseStreamKey(w.unit_key)!;
    const key = `${keyAcrossChains(unit)}|${w.start}|${w.end}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
    const dataset = DATASETS[unit.dataset as keyof typeof DATASETS];
    if (dataset.collection.kind === 'paged' && dataset.collection.recount.countedTwice) probes.add(unit.dataset);
  }
  return [...groups.values()].reduce((n, chains) => n + chainRequests(chains, chainsPerRequest), 0) + probes.size;
}
