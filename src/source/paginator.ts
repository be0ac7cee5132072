import { InsightExportError } from '../errors.js';
import type { Filters } from './query.js';

/**
 * Pages one window [start, end) of a list operation, for one or more chains at once.
 *
 * - Rows come sorted by block_number ascending; a page shorter than `limit` (per chain) ends a chain.
 * - The service refuses pages past `maxPage`. When a chain still has full pages there, its window is
 *   split at the cursor: the rest [cursor, end) is paged again from page 0, where cursor is the
 *   axis value (block number or timestamp) of the last row received. Rows at the cursor value that
 *   were already emitted are recognised by item id and skipped, so nothing is lost or repeated.
 * - Duplicates the service itself sends (a wallet's self-transfer returned twice) are dropped by item id.
 * - Several chains share a request while they all still have rows; once the page cap splits a
 *   chain's window, that chain continues alone from its own cursor.
 */
export interface WindowPagerOptions<Rec> {
  chainIds: number[];
  start: number;
  /** Exclusive. */
  end: number;
  /** Filter names for the window bounds on the chosen axis. */
  lowerFilter: string;
  upperFilter: string;
  /** The job's own filters, sent with every page. */
  baseFilters: Filters;
  limit: number;
  maxPage: number;
  /**
   * Most pages to keep requested ahead of the one being consumed (pipelining; Infinity = no cap
   * of its own). Beyond the next page, how many are requested is also bounded by `pool` and by an
   * estimate of the pages the window still holds (see pagesAhead), so speculation past a
   * window's end costs about one request.
   */
  prefetch: number;
  /** Request slots shared by the windows of a run; without it, `prefetch` alone decides. */
  pool?: RequestPool;
  fetch(chainIds: number[], filters: Filters, page: number): Promise<Rec[]>;
  chainId(rec: Rec): number;
  axisValue(rec: Rec): number;
  itemId(rec: Rec): string;
  /** Called whenever a chain's window is split at the page cap (for logs and reports). */
  onSplit?(chainId: number, cursor: number): void;
}

/**
 * Pages requested but not yet consumed, counted over every window of a run, so that windows
 * that cannot use their share (a split, a window's end) leave it to the others.
 */
export interface RequestPool {
  /** One more speculative page, if the run has room for `rowsPerRequest` more rows ahead. */
  tryTake(rowsPerRequest: number): boolean;
  /** A page that must be requested anyway (the next one after a full page, a sequence's first). */
  take(): void;
  /** A page consumed or abandoned. */
  give(): void;
}

export interface PagedBatch<Rec> {
  chainId: number;
  records: Rec[];
}

/** A chain is complete: every row of its window has been yielded. */
export interface ChainDone {
  chainId: number;
  done: true;
  /** What the run report should warn about this chain's window (the rows are written all the same). */
  warnings?: string[];
}

export class WindowTooDenseError extends InsightExportError {
  override name = 'WindowTooDenseError';
  constructor(chainId: number, axisValue: number, rows: number) {
    super(`More than ${rows} rows share one cursor value on chain ${chainId}`, {
      details: `axis value ${axisValue}: the window cannot be split further without losing rows`,
      hint: 'Narrow the job with filters (for example filter_transaction_index_*), or export by block numbers instead of time.',
    });
  }
}

/** Tracks the rows already emitted at the current cursor value, per chain. */
class ChainCursor {
  lastAxis = Number.NEGATIVE_INFINITY;
  idsAtLast = new Set<string>();
  emitted = 0;
  /** Rows received and the highest axis value seen: the window's density, for prefetching. */
  received = 0;
  seenAxis = Number.NEGATIVE_INFINITY;
  constructor(
    readonly chainId: number,
    public lower: number,
  ) {}

  observe<Rec>(records: Rec[], axisValue: (r: Rec) => number): void {
    this.received += records.length;
    if (records.length > 0) this.seenAxis = Math.max(this.seenAxis, axisValue(records[records.length - 1]!));
  }

  /** Filters out rows already seen; updates the cursor. */
  accept<Rec>(records: Rec[], axisValue: (r: Rec) => number, itemId: (r: Rec) => string): Rec[] {
    const out: Rec[] = [];
    for (const rec of records) {
      const axis = axisValue(rec);
      const id = itemId(rec);
      if (axis === this.lastAxis) {
        if (this.idsAtLast.has(id)) continue;
      } else if (axis > this.lastAxis) {
        this.lastAxis = axis;
        this.idsAtLast.clear();
      }
      this.idsAtLast.add(id);
      out.push(rec);
    }
    this.emitted += out.length;
    return out;
  }
}

/**
 * How many pages beyond the current one a sequence could use: at most `prefetch`, and the pages
 * the window probably still holds (rows received so far per axis unit times what is left of
 * the window, plus one page). At least one: a full page means there may be more.
 */
function pagesAhead<Rec>(opts: WindowPagerOptions<Rec>, full: ChainCursor[]): number {
  let estimate = 1;
  for (const c of full) {
    const span = c.seenAxis - opts.start + 1;
    const left = opts.end - c.seenAxis;
    const rows = span > 0 && c.received > 0 ? (c.received / span) * left : Number.POSITIVE_INFINITY;
    estimate = Math.max(estimate, Math.ceil(rows / opts.limit) + 1);
  }
  return Math.max(1, Math.min(opts.prefetch, estimate));
}

export async function* pageWindow<Rec>(opts: WindowPagerOptions<Rec>): AsyncGenerator<PagedBatch<Rec> | ChainDone> {
  const cursors = new Map(opts.chainIds.map((id) => [id, new ChainCursor(id, opts.start)]));
  const shared = [...opts.chainIds];
  // Phase 1: all chains in one request sequence, while none has been split.
  const leftovers = yield* pageSequence(opts, shared, opts.start, cursors);
  // Phase 2: every chain that hit the page cap continues alone from its cursor.
  const queue = [...leftovers];
  while (queue.length > 0) {
    const chainId = queue.shift()!;
    const cursor = cursors.get(chainId)!;
    const again = yield* pageSequence(opts, [chainId], cursor.lower, cursors);
    queue.push(...again);
  }
}

/**
 * Pages [lower, end) for the given chains from page 0. Returns the chains that reached the page
 * cap with full pages (their cursor.lower moved to the split point).
 */
async function* pageSequence<Rec>(
  opts: WindowPagerOptions<Rec>,
  chainIds: number[],
  lower: number,
  cursors: Map<number, ChainCursor>,
): AsyncGenerator<PagedBatch<Rec> | ChainDone, number[]> {
  let active = [...chainIds];
  const startLower = new Map(active.map((id) => [id, cursors.get(id)!.lastAxis]));
  const filters: Filters = { ...opts.baseFilters, [opts.lowerFilter]: lower, [opts.upperFilter]: opts.end };
  const inFlight = new Map<number, Promise<Rec[]>>();
  const pool = opts.pool;
  /** Requests `page` unless it is past the cap or already requested; false when the pool has no room. */
  const request = (page: number, chains: number[], speculative: boolean): boolean => {
    if (page > opts.maxPage || inFlight.has(page)) return true;
    if (pool) {
      if (!speculative) pool.take();
      else if (!pool.tryTake(opts.limit * chains.length)) return false;
    }
    const p = opts.fetch(chains, filters, page);
    p.catch(() => undefined); // an abandoned prefetch must not become an unhandled rejection
    inFlight.set(page, p);
    return true;
  };
  /** Pages page+1 .. page+ahead; the first `needed` of them are needed anyway, the others are speculation. */
  const requestAhead = (page: number, chains: number[], ahead: number, needed: number) => {
    for (let k = 1; k <= ahead; k++) if (!request(page + k, chains, k > needed)) break;
  };

  try {
    // A sequence after a split knows the window's density: start its pipeline at once.
    const known = active.map((id) => cursors.get(id)!);
    request(0, active, false);
    if (known.every((c) => c.received > 0)) requestAhead(0, active, pagesAhead(opts, known), 0);

    for (let page = 0; ; page++) {
      request(page, active, false);
      const records = await inFlight.get(page)!;
      inFlight.delete(page);
      pool?.give();

      const byChain = new Map<number, Rec[]>();
      for (const id of active) byChain.set(id, []);
      for (const rec of records) {
        const list = byChain.get(opts.chainId(rec));
        if (list === undefined) {
          throw new InsightExportError('The service returned a row of a chain that was not requested', {
            details: `chain ${opts.chainId(rec)} in a request for chains ${active.join(',')}`,
          });
        }
        list.push(rec);
      }
      const stillFull = active.filter((id) => byChain.get(id)!.length >= opts.limit);
      for (const id of active) cursors.get(id)!.observe(byChain.get(id)!, opts.axisValue);
      if (stillFull.length > 0 && page < opts.maxPage) {
        // Pipelining: ask for the following pages while this one is written.
        requestAhead(page, stillFull, pagesAhead(opts, stillFull.map((id) => cursors.get(id)!)), 0);
      }
      for (const id of active) {
        const cursor = cursors.get(id)!;
        const accepted = cursor.accept(byChain.get(id)!, opts.axisValue, opts.itemId);
        if (accepted.length > 0) yield { chainId: id, records: accepted };
      }
      for (const id of active) {
        if (byChain.get(id)!.length < opts.limit) yield { chainId: id, done: true };
      }
      if (stillFull.length === 0) return [];
      if (page >= opts.maxPage) {
        // Split at the cursor: the rest of the window is paged again from page 0.
        const split: number[] = [];
        for (const id of stillFull) {
          const cursor = cursors.get(id)!;
          if (cursor.lastAxis <= startLower.get(id)! || cursor.lastAxis === lower) {
            throw new WindowTooDenseError(id, cursor.lastAxis, (opts.maxPage + 1) * opts.limit);
          }
          cursor.lower = cursor.lastAxis;
          opts.onSplit?.(id, cursor.lower);
          split.push(id);
        }
        return split;
      }
      if (stillFull.length !== active.length) {
        // Chains that ended drop out; requests already in flight for them are harmless (short pages).
        active = stillFull;
      }
    }
  } finally {
    // Pages requested but never consumed (a chain ended, a split, a failure) free their slots.
    if (pool) for (let i = inFlight.size; i > 0; i--) pool.give();
  }
}
