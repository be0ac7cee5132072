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
  /** How many further pages to request while the current one is still arriving (pipelining). */
  prefetch: number;
  fetch(chainIds: number[], filters: Filters, page: number): Promise<Rec[]>;
  chainId(rec: Rec): number;
  axisValue(rec: Rec): number;
  itemId(rec: Rec): string;
  /** Called whenever a chain's window is split at the page cap (for logs and reports). */
  onSplit?(chainId: number, cursor: number): void;
}

export interface PagedBatch<Rec> {
  chainId: number;
  records: Rec[];
}

/** A chain is complete: every row of its window has been yielded. */
export interface ChainDone {
  chainId: number;
  done: true;
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
  constructor(
    readonly chainId: number,
    public lower: number,
  ) {}

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
  const request = (page: number, chains: number[]) => {
    if (page > opts.maxPage || inFlight.has(page)) return;
    const p = opts.fetch(chains, filters, page);
    p.catch(() => undefined); // an abandoned prefetch must not become an unhandled rejection
    inFlight.set(page, p);
  };

  for (let page = 0; ; page++) {
    request(page, active);
    const pending = inFlight.get(page)!;
    const records = await pending;
    inFlight.delete(page);

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
    if (stillFull.length > 0 && page < opts.maxPage) {
      // Pipelining: ask for the following pages while this one is written.
      for (let ahead = 1; ahead <= opts.prefetch; ahead++) request(page + ahead, stillFull);
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
}
