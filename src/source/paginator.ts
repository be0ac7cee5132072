import { InsightExportError } from '../errors.js';
import type { Box, ChainAnswer } from './slice-answers.js';
import { chainIdBatches } from './query.js';
import { Cutter, withAxis, type Knowledge } from './slice-cutter.js';
import { WindowPager, type Sent, type WindowPagerOptions } from './window-pager.js';

export { addRejected, newPagingStats, REJECT_REASONS, rejectedTotals, type PagingStats, type RejectReason } from './paging-stats.js';
export { TARGET_FILL, type RequestPool, type SliceAxis, type WindowPagerOptions } from './window-pager.js';

export interface RecordPage<Rec> {
  chainId: number;
  records: Rec[];
  /**
   * Once these records are taken, every row of the chain below this point of the window's axis has
   * been yielded (its slices are proven): what a stopping run may commit (src/run/stop-cut.ts).
   * A batch may carry no records, only this.
   */
  provenTo?: number;
}

/** A chain is complete: every row of its window has been yielded. */
export interface ChainDone {
  chainId: number;
  done: true;
  /** What the run report should warn about this chain's window (the rows are written all the same). */
  warnings?: string[];
}

/** A slice one value wide on every axis still holds a full answer: it cannot be split. */
export class SliceTooDenseError extends InsightExportError {
  override name = 'SliceTooDenseError';
  constructor(chainId: number, slice: string, limit: number) {
    super(`More than ${limit - 1} rows share one position on chain ${chainId}`, {
      details: `slice ${slice} came back full (limit ${limit}) and has no axis left to split`,
      hint: 'A position holds at most 2 rows (a self-transfer): raise the page size above 2, or report the service answer.',
    });
  }
}

/** A full answer with no row inside its slice: the service ignores the slice's filters. */
export class SliceIgnoredError extends InsightExportError {
  override name = 'SliceIgnoredError';
  constructor(chainId: number, slice: string) {
    super(`The service answered a full page with no row inside the slice asked for on chain ${chainId}`, {
      details: `slice ${slice}`,
      hint: 'The service does not apply the range filters; check the base URL points at the read interface.',
    });
  }
}

/** Weight of the newest proven slice in a chain's density. */
const DENSITY_WEIGHT = 0.5;

/**
 * Every row of `box` on the chains of `known`, in order by chain: cuts the box on `axis` into
 * slices the chains share and pages them concurrently; a chain whose slice comes back full cuts
 * that slice again on its own (on the same axis while it is wider than one value, else on the next).
 */
async function* cutAndPage<Rec>(
  w: WindowPager<Rec>,
  box: Box,
  axis: number,
  known: Map<number, Knowledge>,
): AsyncGenerator<RecordPage<Rec>> {
  const chains = [...known.keys()];
  const cutter = new Cutter(box.lo[axis]!, box.hi[axis]!, known, w.target);
  const queue: Sent<Rec>[] = [];
  /** Sends slices while there is room; the first of an empty queue is the one waited for. */
  const fill = () => {
    while (!cutter.done()) {
      const [lo, hi] = cutter.next();
      const sent = w.send(withAxis(box, axis, lo, hi), chains, queue.length === 0);
      if (!sent) {
        cutter.unget(lo);
        return;
      }
      queue.push(sent);
    }
  };
  const learn = (chainId: number, rows: number, width: number, full: boolean) => {
    if (!Number.isFinite(width)) return;
    const k = known.get(chainId)!;
    const seen = rows / width;
    if (full) k.density = Math.max(k.density, seen);
    else k.density = k.density > 0 ? (1 - DENSITY_WEIGHT) * k.density + DENSITY_WEIGHT * seen : seen;
  };
  // Slices of the window's axis come in its order: each one's end is where its chains are proven to.
  const onWindowAxis = axis === 0;
  try {
    fill();
    while (queue.length > 0) {
      const head = queue.shift()!;
      const width = head.box.hi[axis]! - head.box.lo[axis]!;
      const provenTo = onWindowAxis ? { provenTo: head.box.hi[0]! } : {};
      const proven: RecordPage<Rec>[] = [];
      const full: { chainId: number; slices: AsyncGenerator<RecordPage<Rec>> }[] = [];
      const answers = w.read(head, await w.receive(head));
      const bad = w.problem(head, answers, (c) => known.get(c)!.density, known, axis);
      if (bad) {
        queue.unshift(await w.again(head, bad));
        continue;
      }
      for (const [chainId, answer] of answers) {
        if (!w.full(head, answer)) {
          const records = w.accept(answer.taken);
          learn(chainId, records.length, width, false);
          if (records.length > 0 || onWindowAxis) proven.push({ chainId, records, ...provenTo });
        } else {
          learn(chainId, answer.sent, width, true);
          // Keeps only the sample of the full answer: this frame stays while the slices page.
          full.push({ chainId, slices: splitFull(w, chainId, head.box, answer, known.get(chainId)!.density) });
        }
      }
      fill();
      for (const batch of proven.splice(0)) yield batch;
      for (const { chainId, slices } of full.splice(0)) {
        yield* slices;
        if (onWindowAxis) yield { chainId, records: [], ...provenTo };
      }
      fill();
    }
  } finally {
    // Requests sent but never consumed (a failure, the consumer stopped) free their slots.
    for (const sent of queue) w.release(sent);
  }
}

/**
 * What a full answer tells of its slice for one chain: the axis to cut it on (its first wider than
 * one value) and the chain's rows there (the sample of the answer's axis values).
 */
function fullAnswerKnowledge<Rec>(
  w: WindowPager<Rec>,
  chainId: number,
  box: Box,
  answer: ChainAnswer<Rec>,
  density: number,
): { axis: number; known: Knowledge } {
  const { inside } = answer;
  w.split(chainId, box);
  const axis = box.lo.findIndex((lo, i) => box.hi[i]! - lo > 1);
  if (axis < 0) throw new SliceTooDenseError(chainId, w.describe(box), w.opts.limit);
  if (inside.length === 0) throw new SliceIgnoredError(chainId, w.describe(box));
  const value = w.opts.axes[axis]!.value;
  const sample = inside.map((r) => value(r)).sort((a, b) => a - b);
  const distinct = new Map(answer.taken.map((r) => [w.opts.itemId(r), value(r)]));
  const shown = [...distinct.values()].sort((a, b) => a - b);
  const lo = box.lo[axis]!;
  // The sample spans [lo, its last value]: the slice is at least that dense.
  const sampled = Number.isFinite(box.hi[axis]!) ? sample.length / (sample[sample.length - 1]! - lo + 1) : 0;
  return { axis, known: { sample, density: axis === 0 ? Math.max(density, sampled) : sampled, wasFull: true, shown } };
}

/**
 * A slice that came back full for a chain: cut on its own, on its first axis wider than one value,
 * by the rows of the answer inside it. Not a generator itself, so that the full answer is not kept
 * while the slices are paged: only the sample of its axis values is.
 */
function splitFull<Rec>(
  w: WindowPager<Rec>,
  chainId: number,
  box: Box,
  answer: ChainAnswer<Rec>,
  density: number,
): AsyncGenerator<RecordPage<Rec>> {
  const { axis, known } = fullAnswerKnowledge(w, chainId, box, answer, density);
  return cutAndPage(w, box, axis, new Map([[chainId, known]]));
}

/** Chains of the window cut together on one axis. */
interface CutChains {
  axis: number;
  known: Map<number, Knowledge>;
}

/**
 * Pages one window [start, end) of a list operation, for one or more chains, without trusting the
 * service's order, its OFFSET or a full page.
 *
 * - Only page 0 is ever asked for. A request covers a slice: a box over an ordered list of axes
 *   (the window's axis, then finer ones: block_number, transaction_index or log_index), sent as
 *   filter_<axis>_gte / _lt. A slice is proven complete for a chain only when that chain got fewer
 *   rows than `limit` (raw rows, before de-duplication).
 * - A slice whose answer is full for a chain is cut: its first axis wider than one value is cut
 *   into slices of about `target` rows, sized from the rows that full answer carried (their
 *   quantiles) and beyond them from the chain's density (rows per axis unit, learnt from proven
 *   slices and remembered across windows in `density`). Slices are requested concurrently within
 *   the request pool. A slice one value wide on every axis that is still full cannot be split:
 *   SliceTooDenseError.
 * - A row is taken only if its chain was requested, it lies inside the slice it was asked for and
 *   `reject` finds it the target's; the others are dropped and counted by reason (`rejected`),
 *   in every answer read. Whether an answer is full is decided on the rows the service sent, the
 *   dropped ones included. Rows repeated within a slice are dropped. Slices are disjoint, so no
 *   row is emitted twice, and rows are yielded in slice order, sorted by the axes (block order).
 * - An answer proves only the slice it answers (src/source/bad-answers.ts): one with a row of a
 *   requested chain outside its slice, a row `check` refuses, or fewer rows of a chain than the
 *   wider answer its slice was cut from showed there, is asked again (`answers`: counted, after a
 *   backoff, with a limit one lower each time so that no cache keyed by URL answers it again) and
 *   ends in BadAnswerError when every attempt is bad. An answer of exactly `limit - 1` rows for a
 *   chain (what a proxy dropping the last row of a full page sends) is cut like a full one.
 * - Chains share requests, in batches of at most `chainsPerRequest()` (the run's chain ids per
 *   request, read when the batches are made, so that a halving shows in the next ones): the
 *   window's first request goes to the chains not known to be dense; the dense chains (known, or
 *   found by that request) share the slices of the window's axis, each slice sized for the chain
 *   that fills it first; a chain whose slice comes back full cuts that slice again alone.
 */
export async function* pageWindow<Rec>(opts: WindowPagerOptions<Rec>): AsyncGenerator<RecordPage<Rec> | ChainDone> {
  const w = new WindowPager(opts);
  const box = w.window;
  const width = box.hi[0]! - box.lo[0]!;
  if (w.empty(box)) {
    for (const chainId of opts.chainIds) yield { chainId, done: true };
    return;
  }
  // Chains known to be dense are cut from the start; the others share the first request, and the
  // ones it finds dense are cut with them.
  const dense = new Map<number, Knowledge>();
  for (const chainId of opts.chainIds) {
    const density = opts.density?.get(chainId) ?? 0;
    if (density * width > w.target) dense.set(chainId, { sample: [], density, wasFull: false, shown: [] });
  }
  const cuts: CutChains[] = [];
  yield* sharedFirst(
    w,
    box,
    opts.chainIds.filter((c) => !dense.has(c)),
    dense,
    cuts,
  );
  // The dense chains share their slices too (each still proven only by its own short answer): a
  // slice sized for the densest of them proves the others on the way.
  cuts.unshift(
    ...chainIdBatches([...dense.keys()], opts.chainsPerRequest()).map((chains) => ({
      axis: 0,
      known: new Map(chains.map((c) => [c, dense.get(c)!])),
    })),
  );
  while (cuts.length > 0) {
    const { axis, known } = cuts.shift()!;
    const emitted = new Map([...known.keys()].map((c) => [c, 0]));
    for await (const batch of cutAndPage(w, box, axis, known)) {
      emitted.set(batch.chainId, emitted.get(batch.chainId)! + batch.records.length);
      yield batch;
    }
    for (const [chainId, rows] of emitted) {
      opts.density?.set(chainId, rows / width);
      yield { chainId, done: true };
    }
  }
}

/**
 * The window's first requests, shared by the chains not known to be dense (at most
 * `chainsPerRequest()` chains each: the service refuses more): yields the chains they prove; of the others, it adds
 * what their full answers tell to `dense` (cut on the window's axis) or to `cuts` (a window one
 * value wide there, cut on a finer axis alone). A generator of its own, so that nothing of these
 * answers but that is kept while the window pages on.
 */
async function* sharedFirst<Rec>(
  w: WindowPager<Rec>,
  box: Box,
  shared: number[],
  dense: Map<number, Knowledge>,
  cuts: CutChains[],
): AsyncGenerator<RecordPage<Rec> | ChainDone> {
  const { opts } = w;
  const width = box.hi[0]! - box.lo[0]!;
  const sends = chainIdBatches(shared, opts.chainsPerRequest()).map((chains) => w.send(box, chains, true)!);
  let received = 0;
  try {
    for (let sent of sends) {
      received++;
      let answers = w.read(sent, await w.receive(sent));
      const density = (c: number) => opts.density?.get(c) ?? 0;
      for (let bad = w.problem(sent, answers, density); bad; bad = w.problem(sent, answers, density)) {
        sent = await w.again(sent, bad);
        answers = w.read(sent, await w.receive(sent));
      }
      for (const [chainId, answer] of answers) {
        if (!w.full(sent, answer)) {
          const accepted = w.accept(answer.taken);
          if (accepted.length > 0) yield { chainId, records: accepted };
          opts.density?.set(chainId, accepted.length / width);
          yield { chainId, done: true };
        } else {
          const { axis, known } = fullAnswerKnowledge(w, chainId, box, answer, opts.density?.get(chainId) ?? 0);
          if (axis === 0) dense.set(chainId, known);
          else cuts.push({ axis, known: new Map([[chainId, known]]) });
        }
      }
    }
  } finally {
    // Batches never received (a failure, the consumer stopped) free their slots.
    for (const sent of sends.slice(received)) w.release(sent);
  }
}
