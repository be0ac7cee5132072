/**
 * One window's pager: what pageWindow (paginator.ts) is given, and what one window's chains share
 * while it pages: its box, the requests in flight and the pool's slots, what each request sends,
 * and how an answer is read, judged and accepted (slice-answers.ts).
 */
import { InsightExportError } from '../errors.js';
import type { HeldBody } from './client.js';
import { BadAnswerError, IMMEDIATE_RETRIES, type AnswerPolicy, type BadAnswer } from './bad-answers.js';
import { answerProblem, cutPage, readAnswer, type Box, type ChainAnswer, type SliceAsked } from './slice-answers.js';
import { PageNotWantedError } from './errors.js';
import type { Filters } from './query.js';
import { newPagingStats, type PagingStats, type RejectReason } from './paging-stats.js';
import type { Knowledge } from './slice-cutter.js';

/** The options of pageWindow (paginator.ts: how a window is paged). */
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
  /**
   * The most chain ids one request names now (the run's: InsightClient.chainIdsPerRequest, halved
   * when the service refuses a request for its number of chains); read whenever chains are batched.
   */
  chainsPerRequest: () => number;
  /** Rows aimed at per request when a slice is cut (below `limit`, so that slices come back short). */
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

/** Share of `limit` aimed at per slice when no target is given. */
export const TARGET_FILL = 0.7;

export interface Sent<Rec> extends SliceAsked {
  /** null once released: a request given back keeps nothing of its answer (its window may page on for long). */
  answer: Promise<Rec[]> | null;
  /** Lets the client decode the answer (true) or drop it (false). */
  want(wanted: boolean): void;
  /** 'answered' once its answer or failure arrived; 'released' once given back to the pool. */
  state: 'sent' | 'answered' | 'released';
}

/** Everything one window's chains share: options, the in-flight count, what to send. */
export class WindowPager<Rec> {
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
