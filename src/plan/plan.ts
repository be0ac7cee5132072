/**
 * Job -> planned windows: the windows of each stream (dataset x target x chain).
 *
 * Windows are half-open [start, end) over block numbers or block timestamps (unix seconds),
 * cut on a fixed grid of `range.chunk` starting at 0 (for time: the unix epoch, so with chunks
 * that divide a day or are whole days every window starts at a UTC midnight or a fixed hour),
 * clipped to the range. Completed intervals (from state) are subtracted first, so:
 *  - re-runs plan the same windows and skip the finished ones;
 *  - moving `to` forward plans only the new part;
 *  - a partial last window (to: latest) is completed later by the interval that is missing,
 *    never by re-exporting what is done.
 * A snapshot dataset (extent: snapshot) has one unit per wallet x chain for the UTC day of the run.
 */
import { InsightExportError } from '../errors.js';
import { isSnapshot, type DatasetName, type StreamTarget } from '../datasets/index.js';
import type { Axis, Job } from '../job/schema.js';
import { intersect, subtract, type Interval } from './intervals.js';
import { coverWhole, windowsOf } from './whole-replacements.js';
import { jobStreams, type Stream } from './streams.js';

export type { StreamTarget } from '../datasets/index.js';

/** The table the job file names for a unit target's dataset, if it names one. */
export function chosenTable(dataset: DatasetName, t: StreamTarget): string | undefined {
  return t.tables?.[dataset];
}

export interface PlannedWindow {
  dataset: DatasetName;
  target: StreamTarget;
  /** `targets` part of the keys: lowercase address, name, or `address_topic0` for events. */
  targetKey: string;
  chainId: number;
  axis: Axis;
  window: Interval;
  /** Stable identity of the unit's data stream: `<dataset>/<target>[~<variant>]/<chain>/<axis>` (see stream-key.ts). */
  unitKey: string;
  /** `start_end`, zero-padded to 12 digits (as in src/state) so keys sort like the numbers. */
  windowKey: string;
  /** filter_* parameters of the unit (block/timestamp bounds not included: they come from `window`). */
  filters: Record<string, string>;
}

export interface StreamCoverage {
  unitKey: string;
  dataset: DatasetName;
  targetKey: string;
  chainId: number;
  axis: Axis;
  /** The range asked for on this chain (after resolving latest); null when nothing is exportable yet. */
  range: Interval | null;
  /** Completed parts inside the range. */
  done: Interval[];
  /** What this plan exports. */
  todo: Interval[];
  /**
   * What the job asks for that the service does not serve yet (a fixed `to` past its head minus the
   * safety lag, see `Plan.clamped`), minus what is completed: pending, not missing. Later runs export it.
   */
  pending: Interval[];
}

export interface ChainHead {
  block?: number;
  /** Unix seconds of the head block. */
  time?: number;
}

export interface PlanOptions {
  /** Completed intervals of a unit (from state); any order, overlaps allowed. */
  completed: (unitKey: string) => Interval[];
  /**
   * The completed intervals state holds, before --force, --rewind or a repair took any out of
   * `completed` (disjoint): what the plan exports again of one it exports whole, as one window
   * (see whole-replacements.ts). Default: `completed`.
   */
  exported?: (unitKey: string) => Interval[];
  /**
   * The head the service serves on a chain, asked once per chain: for `to: latest`, and for a fixed
   * `to` that `serves` does not prove served (or every fixed `to` when there is no `serves`).
   */
  latest?: (chainId: number) => Promise<ChainHead>;
  /**
   * Whether the service is proven to serve `point` (a block number, or a block time in unix
   * seconds) on a chain, from what is known or one cheap request; false sends the planner to
   * `latest`. Only the service says what it has indexed: the clock never does.
   */
  serves?: (chainId: number, axis: Axis, point: number) => Promise<boolean>;
  /** Clamp a fixed `to` to the head minus the safety lag, like latest (default true; verify plans the whole range). */
  clampFixedTo?: boolean;
  /** Unix seconds "now" for snapshot datasets (default: the clock). */
  now?: () => number;
}

export interface Plan {
  jobName: string;
  axis: Axis | null;
  /** Heads used for `to: latest` or to check a fixed `to`, by chain id. */
  heads: Record<number, ChainHead>;
  /**
   * Chains whose fixed `to` lies past the head minus the safety lag: this plan ends their range
   * at `end` (exclusive), exactly as `to: latest` would; later runs export the rest.
   */
  clamped: { chainId: number; to: number; end: number }[];
  units: PlannedWindow[];
  coverage: StreamCoverage[];
}

/** The planner could not do its part (e.g. no chain head for `to: latest`). */
export class PlanError extends InsightExportError {
  override name = 'PlanError';
}

const DAY = 86_400;
export const WINDOW_KEY_DIGITS = 12;

export function windowKey(w: Interval): string {
  return `${String(w.start).padStart(WINDOW_KEY_DIGITS, '0')}_${String(w.end).padStart(WINDOW_KEY_DIGITS, '0')}`;
}

export function parseWindowKey(key: string): Interval | null {
  const m = /^(\d+)_(\d+)$/.exec(key);
  return m ? { start: Number(m[1]), end: Number(m[2]) } : null;
}

export async function planJob(job: Job, opts: PlanOptions): Promise<Plan> {
  const range = job.range;
  const streams = jobStreams(job);
  const now = Math.floor((opts.now ?? (() => Date.now() / 1000))());
  const ranges = chainRanges(job, streams, opts);
  // Every chain's range at once (a head search is several round trips); the first chain in job order that fails is the error.
  const chainIds = [...new Set(streams.filter((spec) => !isSnapshot(spec.dataset)).map((spec) => spec.chainId))];
  const failed = (await Promise.allSettled(chainIds.map(ranges.rangeOf))).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;

  const units: PlannedWindow[] = [];
  const coverage: StreamCoverage[] = [];
  for (const spec of streams) {
    const snapshot = isSnapshot(spec.dataset);
    const axis: Axis = snapshot ? 'time' : range!.by;
    const r = snapshot ? { start: now - (now % DAY), end: now - (now % DAY) + DAY } : await ranges.rangeOf(spec.chainId);
    const done = r ? intersect([r], opts.completed(spec.unitKey)) : [];
    const exported = (opts.exported ?? opts.completed)(spec.unitKey);
    const todo = r ? coverWhole(subtract([r], done), exported) : [];
    const clampedAt = snapshot ? undefined : ranges.clamped.get(spec.chainId);
    const unserved = clampedAt ? { start: Math.max(range!.from, clampedAt.end), end: clampedAt.to } : null;
    const pending = unserved ? subtract([unserved], opts.completed(spec.unitKey)) : [];
    coverage.push({
      unitKey: spec.unitKey,
      dataset: spec.dataset,
      targetKey: spec.targetKey,
      chainId: spec.chainId,
      axis,
      range: r,
      done,
      todo,
      pending,
    });
    const grid = snapshot ? DAY : range!.chunk;
    for (const interval of todo) {
      for (const w of windowsOf(interval, grid, exported)) {
        units.push({
          ...{ dataset: spec.dataset, target: spec.target, targetKey: spec.targetKey, chainId: spec.chainId, axis },
          ...{ window: w, unitKey: spec.unitKey, windowKey: windowKey(w), filters: spec.filters },
        });
      }
    }
  }
  return {
    jobName: job.name,
    axis: range?.by ?? null,
    heads: ranges.heads,
    clamped: [...ranges.clamped.values()].sort((a, b) => a.chainId - b.chainId),
    units,
    coverage,
  };
}

/**
 * The range [from, end) to export on each chain (null when nothing is exportable yet), each asked
 * once: up to the head minus the safety lag for `to: latest`, or for a fixed `to` past what the
 * service is proven to serve (clamped); the heads asked and the chains clamped.
 */
function chainRanges(
  job: Job,
  streams: readonly Stream[],
  opts: PlanOptions,
): {
  rangeOf: (chainId: number) => Promise<Interval | null>;
  heads: Record<number, ChainHead>;
  clamped: Map<number, { chainId: number; to: number; end: number }>;
} {
  const range = job.range;
  const heads: Record<number, ChainHead> = {};
  const headCache = new Map<number, Promise<ChainHead>>();
  const headOf = (chainId: number): Promise<ChainHead> => {
    if (!opts.latest) {
      throw new PlanError('The job exports up to "latest" but no chain head is available', {
        details: `job ${job.name}, chain ${chainId}`,
        hint: 'the caller must pass `latest` to planJob (the source client asks the service for the newest block)',
      });
    }
    let p = headCache.get(chainId);
    if (!p) {
      p = opts.latest(chainId).then((h) => {
        heads[chainId] = h;
        return h;
      });
      headCache.set(chainId, p);
    }
    return p;
  };

  const clamped = new Map<number, { chainId: number; to: number; end: number }>();
  /** Head minus the lag: the end (exclusive) of what is exportable on a chain. */
  const exportableEnd = async (chainId: number): Promise<number> => {
    const head = await headOf(chainId);
    const h = range!.by === 'block' ? head.block : head.time;
    if (h === undefined || !Number.isSafeInteger(h)) {
      throw new PlanError(`No ${range!.by === 'block' ? 'head block number' : 'head block time'} for chain ${chainId}`, {
        details: `job ${job.name}: range.to is ${range!.to === 'latest' ? 'latest' : range!.to}, by ${range!.by}`,
      });
    }
    return h - range!.safety_lag + 1;
  };

  const newestLeft = newestLeftByChain(job, streams, opts.completed);

  /** The range [from, end) on a chain, or null when nothing is exportable yet. */
  const rangeOn = async (chainId: number): Promise<Interval | null> => {
    if (!range) return null;
    let end: number;
    if (range.to === 'latest') {
      end = await exportableEnd(chainId);
    } else {
      end = range.to;
      // A fixed `to` past what the service serves would commit windows it has not indexed (in the
      // future, or in a past it is still back-filling): clamp it like latest.
      const left = newestLeft.get(chainId);
      if (left !== undefined && opts.clampFixedTo !== false && (opts.latest || opts.serves)) {
        const served = opts.serves ? await opts.serves(chainId, range.by, left - 1 + range.safety_lag) : false;
        const exportable = served ? end : await exportableEnd(chainId);
        if (exportable < left) {
          end = exportable;
          clamped.set(chainId, { chainId, to: range.to, end });
        }
      }
    }
    return end > range.from ? { start: range.from, end } : null;
  };
  const ranges = new Map<number, Promise<Interval | null>>();
  const rangeOfChain = (chainId: number) => {
    let r = ranges.get(chainId);
    if (!r) ranges.set(chainId, (r = rangeOn(chainId)));
    return r;
  };
  return { rangeOf: rangeOfChain, heads, clamped };
}

/**
 * Within a fixed range, only the newest point a chain has left to export must be served: a chain
 * whose range is complete needs no request, one with a gap far below the head needs no head.
 */
function newestLeftByChain(job: Job, streams: readonly Stream[], completed: PlanOptions['completed']): Map<number, number> {
  const range = job.range;
  const newestLeft = new Map<number, number>();
  if (range && range.to !== 'latest' && range.to > range.from) {
    const whole = { start: range.from, end: range.to };
    for (const spec of streams) {
      if (isSnapshot(spec.dataset)) continue;
      const left = subtract([whole], completed(spec.unitKey));
      if (left.length > 0) newestLeft.set(spec.chainId, Math.max(newestLeft.get(spec.chainId) ?? -Infinity, left.at(-1)!.end));
    }
  }
  return newestLeft;
}
