import { InsightExportError } from '../errors.js';
import type { HeldBody } from './client.js';
import { BadAnswerError, IMMEDIATE_RETRIES, type AnswerPolicy, type BadAnswer } from './bad-answers.js';
import { answerProblem, cutPage, readAnswer, type Box, type ChainAnswer, type SliceAsked } from './slice-answers.js';
import { PageNotWantedError } from './errors.js';
import { chainIdBatches, type Filters } from './query.js';

/**
 * Pages one window [start, end) of a list operation, for one or more chains, without trusting the
 * service's order, its OFFSET or a full page.
 *
 * - Only page 0 is ever asked for. A request covers a slice: a box over an ordered list of axes
 *   (the window's axis, then finer ones: block_number, transaction_index or log_index), sent as
 *   filter_<axis>_gte / _lt. A slice is proven complete for a chain only when that chain got fewer
 *   rows than `limit` (raw rows, before de-duplication).
 * - A slice whose answer is full for a chain is cut: its first axis wider than one value is cut
 *   into pieces of about `target` rows, sized from the rows that full answer carried (their
 *   quantiles) and beyond them from the chain's density (rows per axis unit, learnt from proven
 *   pieces and remembered across windows in `density`). Pieces are requested concurrently within
 *   the request pool. A slice one value wide on every axis that is still full cannot be split:
 *   SliceTooDenseError.
 * - A row is taken only if its chain was requested, it lies inside the slice it was asked for and
 *   `reject` finds it the target's; the others are dropped and counted by reason (`rejected`),
 *   in every answer read. Whether an answer is full is decided on the rows the service sent, the
 *   dropped ones included. Rows repeated within a slice are dropped. Pieces are disjoint, so no
 *   row is emitted twice, and rows are yielded in slice order, sorted by the axes (block order).
 * - An answer proves only the slice it answers (src/source/bad-answers.ts): one with a row of a
 *   requested chain outside its slice, a row `check` refuses, or fewer rows of a chain than the
 *   wider answer its slice was cut from showed there, is asked again (`answers`: counted, after a
 *   backoff, with a limit one lower each time so that no cache keyed by URL answers it again) and
 *   ends in BadAnswerError when every attempt is bad. An answer of exactly `limit - 1` rows for a
 *   chain (what a proxy dropping the last row of a full page sends) is cut like a full one.
 * - Chains share requests, in batches of at most MAX_CHAIN_IDS (the most one request takes): the
 *   window's first request goes to the chains not known to be dense; the dense chains (known, or
 *   found by that request) share the pieces of the window's axis, each piece sized for the chain
 *   that fills it first; a chain whose piece comes back full cuts that piece again alone.
 */
export interface WindowPagerOptions<Rec> {
  chainIds: number[];
  start: number;
  /** Exclusive. */
  end: number;
  /** The window's axis first, then finer ones; each bounded by filter_<field>_gte / _lt. */
  axes: readonly SliceAxis<Rec>[];
  /** The job's own filters, sent with every request (bounds on an axis are folded into the slice). */
  baseFilters: Filters;
  /** The `limit` sent: an answer with fewer rows than this for a chain proves its slice. */
  limit: number;
  /** Rows aimed at per request when a slice is cut (below `limit`, so that pieces come back short). */
  target?: number;
  /**
   * Most requests one window keeps in flight beyond the one it waits for (Infinity = no cap of
   * its own; the pool decides).
   */
  prefetch: number;
  /** Request slots shared by the windows of a run; without it, `prefetch` alone decides. */
  pool?: RequestPool;
  /** Rows per unit of the window's axis, by chain: read at the start, updated at the end of a window. */
  density?: Map<number, number>;
  /** Counters, added to (for logs, reports and the bench). */
  stats?: PagingStats;
  /** One request (with the `limit` to send); its answer is decoded only once `held.wanted` resolves (when the window reads it). */
  fetch(chainIds: number[], filters: Filters, held: HeldBody, limit: number): Promise<Rec[]>;
  chainId(rec: Rec): number;
  itemId(rec: Rec): string;
  /** Why a row of a requested chain inside its slice is not the target's (e.g. other_wallet), or null when it is. */
  reject?(rec: Rec): RejectReason | null;
  /** Called whenever a chain's slice came back full and is split (for logs). */
  onSplit?(chainId: number, slice: string): void;
  /** Why a row of a requested chain cannot be in any answer of this window, or null (see bad-answers.ts). */
  check?(rec: Rec): 'implausible' | 'block_hash' | null;
  /** Answers that prove nothing: counted and asked again (default: at once, up to 6 attempts). */
  answers?: AnswerPolicy;
  /** Called with an answer that proved nothing before it is asked again (what the run resolved may be the stale side). */
  onBadAnswer?(bad: BadAnswer): Promise<void>;
}

export interface SliceAxis<Rec> {
  /** Column name: the slice is sent as filter_<field>_gte / filter_<field>_lt. */
  field: string;
  value(rec: Rec): number;
}

/**
 * Why a row the service sent is not written: of a chain the request did not ask for, outside the
 * slice asked for, or what the dataset's own check says (another wallet, contract, event).
 */
export const REJECT_REASONS = ['other_chain', 'outside_slice', 'other_wallet', 'other_contract', 'other_event'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface PagingStats {
  requests: number;
  /** Answers that were full for a chain, whose slice was then split. */
  splits: number;
  /**
   * Rows of the answers read that were dropped as not the request's, by chain and reason: a row of
   * a chain the request did not ask for counts under the first chain it asked for.
   */
  rejected: Map<number, Partial<Record<RejectReason, number>>>;
  /** The first row rejected, for the log. */
  rejectedExample: { reason: RejectReason; row: unknown } | null;
  /** Rows repeated within one answer's slice (dropped). */
  repeated: number;
}

export function newPagingStats(): PagingStats {
  return { requests: 0, splits: 0, rejected: new Map(), rejectedExample: null, repeated: 0 };
}

/** Every rejected row of `stats`, by reason. */
export function rejectedTotals(stats: PagingStats): Partial<Record<RejectReason, number>> {
  const out: Partial<Record<RejectReason, number>> = {};
  for (const byReason of stats.rejected.values()) addRejected(out, byReason);
  return out;
}

/** Adds the counts of `more` to `into`. */
export function addRejected(into: Partial<Record<RejectReason, number>>, more: Partial<Record<RejectReason, number>>): void {
  for (const reason of REJECT_REASONS) if (more[reason]) into[reason] = (into[reason] ?? 0) + more[reason];
}

/**
 * Requests sent but not yet consumed, counted over every window of a run, so that windows that
 * cannot use their share leave it to the others.
 */
export interface RequestPool {
  /** One more speculative request, if the run has a request slot free and room for `rowsPerRequest` more rows ahead. */
  tryTake(rowsPerRequest: number): boolean;
  /** A request that must be sent anyway (the one a window waits for). */
  take(): void;
  /** A request's answer (or failure) arrived: it no longer holds a request slot, only its rows until consumed. */
  answered(): void;
  /** A request consumed or abandoned; `answered`: answered() was called for it. */
  give(answered: boolean): void;
}

export interface PagedBatch<Rec> {
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

/** Share of `limit` aimed at per piece when no target is given. */
export const TARGET_FILL = 0.7;
/** Weight of the newest proven piece in a chain's density. */
const DENSITY_WEIGHT = 0.5;

interface Sent<Rec> extends SliceAsked {
  /** null once released: a request given back keeps nothing of its answer (its window may page on for long). */
  answer: Promise<Rec[]> | null;
  /** Lets the client decode the answer (true) or drop it (false). */
  want(wanted: boolean): void;
  /** 'answered' once its answer or failure arrived; 'released' once given back to the pool. */
  state: 'sent' | 'answered' | 'released';
}

/** Everything one window's chains share: options, the in-flight count, what to send. */
class WindowPager<Rec> {
  readonly target: number;
  /** Filters the job sends besides the slice's bounds (its bounds on an axis folded into the box). */
  readonly baseFilters: Filters;
  readonly window: Box;
  inFlight = 0;
  private readonly stats: PagingStats;

  constructor(readonly opts: WindowPagerOptions<Rec>) {
    if (!Number.isInteger(opts.limit) || opts.limit < 2) {
      throw new InsightExportError(`A page size of ${opts.limit} cannot prove a slice`, {
        details: 'one position (block, transaction_index / log_index) can hold 2 rows',
        hint: 'Use a page size of at least 2.',
      });
    }
    this.target = Math.max(1, Math.min(opts.limit - 1, Math.floor(opts.target ?? opts.limit * TARGET_FILL)));
    this.stats = opts.stats ?? newPagingStats();
    const { box, rest } = boxFromFilters(opts.axes, opts.baseFilters, opts.start, opts.end);
    this.window = box;
    this.baseFilters = rest;
  }

  empty(box: Box): boolean {
    return box.lo.some((lo, i) => lo >= box.hi[i]!);
  }

  /** Sends a request for `box`; `needed` is the one the window waits for, others are speculation. */
  send(box: Box, chains: number[], needed: boolean, attempt = 1): Sent<Rec> | null {
    const pool = this.opts.pool;
    if (!needed) {
      if (this.inFlight >= this.opts.prefetch) return null;
      if (pool && !pool.tryTake(this.opts.limit * chains.length)) return null;
    } else {
      pool?.take();
    }
    this.inFlight++;
    this.stats.requests++;
    let want!: (wanted: boolean) => void;
    const wanted = new Promise<void>((resolve, reject) => {
      want = (yes) => (yes ? resolve() : reject(new PageNotWantedError()));
    });
    // Rejected when the window stops before reading the page, whether or not the client waits on it by then.
    wanted.catch(() => undefined);
    const arrived = () => {
      if (sent.state !== 'sent') return;
      sent.state = 'answered';
      pool?.answered();
    };
    // Asked again, a box is sent with another limit: a cache keyed by URL cannot answer it again.
    const limit = attempt === 1 ? this.opts.limit : Math.max(2, this.opts.limit - attempt + 1);
    const answer = this.opts.fetch(chains, this.filters(box), { received: arrived, wanted }, limit);
    const sent: Sent<Rec> = { box, chains, attempt, limit, answer, want, state: 'sent' };
    // A request that fails for good arrives too. Also keeps an abandoned request from becoming an unhandled rejection.
    answer.then(arrived, arrived);
    return sent;
  }

  /** Waits for an answer; its slot is given back whatever happens. */
  async receive(sent: Sent<Rec>): Promise<Rec[]> {
    sent.want(true);
    try {
      return await sent.answer!;
    } finally {
      this.release(sent);
    }
  }

  release(sent: Sent<Rec>): void {
    sent.want(false);
    sent.answer = null;
    this.inFlight--;
    this.opts.pool?.give(sent.state === 'answered');
    sent.state = 'released';
  }

  filters(box: Box): Filters {
    const f: Filters = { ...this.baseFilters };
    this.opts.axes.forEach((axis, i) => {
      // The window's axis is always bounded; finer axes only once the slice narrows them.
      if (i === 0 || box.lo[i]! > 0) f[`filter_${axis.field}_gte`] = box.lo[i]!;
      if (i === 0 || box.hi[i]! !== Number.POSITIVE_INFINITY) f[`filter_${axis.field}_lt`] = box.hi[i]!;
    });
    return f;
  }

  describe(box: Box): string {
    return this.opts.axes
      .map((a, i) => `${a.field} [${box.lo[i]}, ${box.hi[i] === Number.POSITIVE_INFINITY ? '∞' : box.hi[i]})`)
      .join(' × ');
  }

  /** An answer by requested chain, its rows checked against the request (see slice-answers.ts). */
  read(sent: Sent<Rec>, rows: Rec[]): Map<number, ChainAnswer<Rec>> {
    return readAnswer(sent, rows, this.opts, (chainId, reason, row) => this.rejected(chainId, reason, row));
  }

  /** Whether a chain's answer is full: `limit` rows or more, or a page cut by one row (counted). */
  full(sent: Sent<Rec>, answer: ChainAnswer<Rec>): boolean {
    if (answer.sent >= sent.limit) return true;
    if (!cutPage(sent, answer)) return false;
    (this.opts.answers ?? IMMEDIATE_RETRIES).note('cut_page');
    return true;
  }

  /**
   * Why an answer proves nothing, or null (see answerProblem): `density` is each chain's rows per
   * unit of `axis`, `known` what the wider answer the box was cut from showed.
   */
  problem(
    sent: Sent<Rec>,
    answers: Map<number, ChainAnswer<Rec>>,
    density: (chainId: number) => number,
    known?: Map<number, Knowledge>,
    axis = 0,
  ): BadAnswer | null {
    return answerProblem(sent, answers, this.opts, {
      density,
      shown: (chainId) => known?.get(chainId)?.shown,
      axis,
      full: (_, a) => this.full(sent, a as ChainAnswer<Rec>),
      where: (chainId) => `${this.describe(sent.box)} on chain ${chainId}`,
    });
  }

  /** The box of an answer that proved nothing, asked again after the policy's wait; BadAnswerError when no attempt is left. */
  async again(sent: Sent<Rec>, bad: BadAnswer): Promise<Sent<Rec>> {
    const policy = this.opts.answers ?? IMMEDIATE_RETRIES;
    policy.note(bad.reason);
    if (!(await policy.retry(sent.attempt, bad))) {
      throw new BadAnswerError(bad.reason, bad.what, { details: `${sent.attempt} attempts, the last with limit ${sent.limit}` });
    }
    await this.opts.onBadAnswer?.(bad);
    return this.send(sent.box, sent.chains, true, sent.attempt + 1)!;
  }

  private rejected(chainId: number, reason: RejectReason, row: Rec): void {
    let byReason = this.stats.rejected.get(chainId);
    if (!byReason) this.stats.rejected.set(chainId, (byReason = {}));
    byReason[reason] = (byReason[reason] ?? 0) + 1;
    this.stats.rejectedExample ??= { reason, row };
  }

  /** Rows of a proven slice (read: inside it, the target's), each once, sorted by the axes: what it yields. */
  accept(rows: Rec[]): Rec[] {
    const axes = this.opts.axes;
    const seen = new Set<string>();
    const unique: Rec[] = [];
    for (const r of rows) {
      const id = this.opts.itemId(r);
      if (seen.has(id)) {
        this.stats.repeated++;
        continue;
      }
      seen.add(id);
      unique.push(r);
    }
    if (!sortedByAxes(unique, axes)) unique.sort((a, b) => compareByAxes(a, b, axes));
    return unique;
  }

  split(chainId: number, box: Box): void {
    this.stats.splits++;
    this.opts.onSplit?.(chainId, this.describe(box));
  }
}

function compareByAxes<Rec>(a: Rec, b: Rec, axes: readonly SliceAxis<Rec>[]): number {
  for (const axis of axes) {
    const d = axis.value(a) - axis.value(b);
    if (d !== 0) return d;
  }
  return 0;
}

function sortedByAxes<Rec>(rows: Rec[], axes: readonly SliceAxis<Rec>[]): boolean {
  for (let i = 1; i < rows.length; i++) if (compareByAxes(rows[i - 1]!, rows[i]!, axes) > 0) return false;
  return true;
}

/**
 * The window's box, with the job's own bounds on any axis folded in (so that a slice never
 * overrides them), and the job's other filters.
 */
function boxFromFilters<Rec>(axes: readonly SliceAxis<Rec>[], filters: Filters, start: number, end: number): { box: Box; rest: Filters } {
  const rest: Filters = { ...filters };
  const lo: number[] = [];
  const hi: number[] = [];
  axes.forEach((axis, i) => {
    let l = i === 0 ? start : 0;
    let h = i === 0 ? end : Number.POSITIVE_INFINITY;
    const take = (suffix: string): number | undefined => {
      const name = `filter_${axis.field}${suffix}`;
      if (!Object.hasOwn(rest, name)) return undefined;
      const v = Number(rest[name]);
      delete rest[name];
      return v;
    };
    const eq = take('');
    const gte = take('_gte');
    const gt = take('_gt');
    const lte = take('_lte');
    const lt = take('_lt');
    if (eq !== undefined) {
      l = Math.max(l, eq);
      h = Math.min(h, eq + 1);
    }
    if (gte !== undefined) l = Math.max(l, gte);
    if (gt !== undefined) l = Math.max(l, gt + 1);
    if (lte !== undefined) h = Math.min(h, lte + 1);
    if (lt !== undefined) h = Math.min(h, lt);
    lo.push(l);
    hi.push(h);
  });
  return { box: { lo, hi }, rest };
}

function withAxis(box: Box, axis: number, lo: number, hi: number): Box {
  const b: Box = { lo: [...box.lo], hi: [...box.hi] };
  b.lo[axis] = lo;
  b.hi[axis] = hi;
  return b;
}

/** What is known of one chain's rows on one axis of a slice when it is cut. */
interface Knowledge {
  /** Axis values of the rows a full answer carried inside the slice, ascending. */
  sample: number[];
  /** Rows per axis unit (0: unknown). */
  density: number;
  /** The whole slice came back full for the chain: it is never asked whole again. */
  wasFull: boolean;
  /** Axis values of the chain's distinct rows that full answer held, ascending: a piece's answer must hold as many. */
  shown: number[];
}

/**
 * Cuts [lo, hi) of one axis into pieces that one or more chains share, each of about `target`
 * rows for the chain that fills it first: by a chain's sample quantiles while they last, then by
 * its density; the rest in one piece when no density is known or the axis is unbounded. Never
 * returns the whole of a slice that came back full for a chain.
 */
class Cutter {
  private x: number;
  /** By chain: the index of the first sample value at or after x. */
  private readonly at = new Map<number, number>();
  constructor(
    private readonly lo: number,
    private readonly hi: number,
    private readonly known: Map<number, Knowledge>,
    private readonly target: number,
  ) {
    this.x = lo;
  }

  done(): boolean {
    return this.x >= this.hi;
  }

  /** Gives back a piece that could not be sent: the next one starts at `lo` again. */
  unget(lo: number): void {
    this.x = lo;
    this.at.clear();
  }

  next(): [number, number] {
    const x = this.x;
    let cut = this.hi;
    for (const [chainId, known] of this.known) cut = Math.min(cut, this.cutFor(chainId, known, x));
    this.x = cut;
    return [x, cut];
  }

  /** Where a piece from x would end for one chain alone. */
  private cutFor(chainId: number, known: Knowledge, x: number): number {
    const { sample, density } = known;
    let k = this.at.get(chainId) ?? 0;
    while (k < sample.length && sample[k]! < x) k++;
    this.at.set(chainId, k);
    const bounded = this.hi !== Number.POSITIVE_INFINITY;
    let cut: number;
    if (k < sample.length) {
      const j = k + this.target;
      if (j < sample.length) {
        cut = sample[j]!;
        if (cut <= x) cut = x + 1; // more than `target` rows at x: a piece one value wide
      } else {
        // The sample ends inside this piece: extend it by the density for what is left of the target.
        const left = this.target - (sample.length - k);
        const beyond = density > 0 && bounded ? Math.floor(left / density) : 0;
        cut = sample[sample.length - 1]! + 1 + beyond;
      }
    } else if (density > 0 && bounded) {
      cut = x + Math.max(1, Math.floor(this.target / density));
    } else {
      cut = this.hi;
    }
    cut = Math.min(this.hi, Math.max(x + 1, cut));
    if (known.wasFull && x === this.lo && cut >= this.hi) {
      // The whole slice again would come back full again: halve it (the sample said nothing useful).
      cut = bounded ? x + Math.max(1, Math.floor((this.hi - x) / 2)) : x + 1;
    }
    return cut;
  }
}

/**
 * Every row of `box` on the chains of `known`, in order by chain: cuts the box on `axis` into
 * pieces the chains share and pages them concurrently; a chain whose piece comes back full cuts
 * that piece again on its own (on the same axis while it is wider than one value, else on the next).
 */
async function* cutAndPage<Rec>(
  w: WindowPager<Rec>,
  box: Box,
  axis: number,
  known: Map<number, Knowledge>,
): AsyncGenerator<PagedBatch<Rec>> {
  const chains = [...known.keys()];
  const cutter = new Cutter(box.lo[axis]!, box.hi[axis]!, known, w.target);
  const queue: Sent<Rec>[] = [];
  /** Sends pieces while there is room; the first of an empty queue is the one waited for. */
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
  // Pieces of the window's axis come in its order: each one's end is where its chains are proven to.
  const onWindowAxis = axis === 0;
  try {
    fill();
    while (queue.length > 0) {
      const head = queue.shift()!;
      const width = head.box.hi[axis]! - head.box.lo[axis]!;
      const provenTo = onWindowAxis ? { provenTo: head.box.hi[0]! } : {};
      const proven: PagedBatch<Rec>[] = [];
      const full: { chainId: number; pieces: AsyncGenerator<PagedBatch<Rec>> }[] = [];
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
          // Keeps only the sample of the full answer: this frame stays while the pieces page.
          full.push({ chainId, pieces: splitFull(w, chainId, head.box, answer, known.get(chainId)!.density) });
        }
      }
      fill();
      for (const batch of proven.splice(0)) yield batch;
      for (const { chainId, pieces } of full.splice(0)) {
        yield* pieces;
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
 * while the pieces are paged: only the sample of its axis values is.
 */
function splitFull<Rec>(
  w: WindowPager<Rec>,
  chainId: number,
  box: Box,
  answer: ChainAnswer<Rec>,
  density: number,
): AsyncGenerator<PagedBatch<Rec>> {
  const { axis, known } = fullAnswerKnowledge(w, chainId, box, answer, density);
  return cutAndPage(w, box, axis, new Map([[chainId, known]]));
}

/** Chains of the window cut together on one axis. */
interface CutChains {
  axis: number;
  known: Map<number, Knowledge>;
}

export async function* pageWindow<Rec>(opts: WindowPagerOptions<Rec>): AsyncGenerator<PagedBatch<Rec> | ChainDone> {
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
  // The dense chains share their pieces too (each still proven only by its own short answer): a
  // piece sized for the densest of them proves the others on the way.
  cuts.unshift(...chainIdBatches([...dense.keys()]).map((chains) => ({ axis: 0, known: new Map(chains.map((c) => [c, dense.get(c)!])) })));
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
 * The window's first requests, shared by the chains not known to be dense (at most MAX_CHAIN_IDS
 * chains each: the service refuses more): yields the chains they prove; of the others, it adds
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
): AsyncGenerator<PagedBatch<Rec> | ChainDone> {
  const { opts } = w;
  const width = box.hi[0]! - box.lo[0]!;
  const sends = chainIdBatches(shared).map((chains) => w.send(box, chains, true)!);
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
