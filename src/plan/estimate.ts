/**
 * A rough count of the requests a plan will make, before making any.
 *
 * How: every window costs at least one request (a short or empty page ends paging). Given a
 * density guess (rows per block or per second of a unit, e.g. from the last run's report), a
 * window of n rows costs floor(n / limit) + 1 pages: full pages, then the short page that ends
 * paging. When that exceeds the service's page cap (20 pages; 500 with group_by/aggregate) the
 * paginator splits the window, and each extra sub-window adds one more short page.
 * Aggregates and NFT holdings are counted as one page per unit unless a density is given.
 * Without densities the result is the minimum: one request per unit.
 */
import { capabilitiesOf, type DatasetName } from '../datasets/index.js';
import type { Axis } from '../job/schema.js';
import { chainRequests } from '../source/query.js';
import { batchable, joinsBatch } from './batch-cells.js';
import { length } from './intervals.js';
import { windowKey, type Plan, type PlannedWindow } from './plan.js';
import { keyAcrossChains, parseStreamKey } from './stream-key.js';

export const DEFAULT_PAGE_LIMIT = 1000;

export interface EstimateOptions {
  /** Expected rows per block (by: block) or per second (by: time) of a unit; undefined = unknown. */
  density?: (unit: PlannedWindow) => number | undefined;
  /** Rows per page (the `limit` parameter). Default 1000. */
  pageLimit?: number;
}

export interface RequestEstimate {
  units: number;
  /** One request per unit: the least the plan can cost. */
  minimum: number;
  /** With the densities given (equals `minimum` without them). */
  expected: number;
  /** Expected rows, when densities were given for every unit; otherwise null. */
  rows: number | null;
  byDataset: Partial<Record<DatasetName, { units: number; requests: number }>>;
}

export function pagesFor(rows: number, limit: number, cap: number): number {
  const pages = Math.floor(rows / limit) + 1;
  if (pages <= cap) return pages;
  const subWindows = Math.ceil(pages / cap);
  return Math.floor(rows / limit) + subWindows;
}

export function estimateRequests(plan: Plan, opts: EstimateOptions = {}): RequestEstimate {
  const limit = opts.pageLimit ?? DEFAULT_PAGE_LIMIT;
  let expected = 0;
  let rows = 0;
  let allKnown = true;
  const byDataset: RequestEstimate['byDataset'] = {};
  for (const u of plan.units) {
    const d = opts.density?.(u);
    let requests = 1;
    if (d === undefined || !(d >= 0)) allKnown = false;
    else {
      const n = Math.round(d * length(u.window));
      rows += n;
      requests = pagesFor(n, limit, capabilitiesOf(u.dataset).pageCap ?? Number.POSITIVE_INFINITY);
    }
    expected += requests;
    const b = (byDataset[u.dataset] ??= { units: 0, requests: 0 });
    b.units += 1;
    b.requests += requests;
  }
  return { units: plan.units.length, minimum: plan.units.length, expected, rows: allKnown ? rows : null, byDataset };
}

/** What a run of a plan is expected to send in all, by kind of request. */
export interface RunEstimate {
  /** Proving the chains served (and names resolved): what planning itself sent, which a run sends again. */
  checks: number;
  /** A block per window edge and chain (two on the time axis: the pair that proves where a time falls). */
  edges: number;
  /** The first page of every window and target, for up to source.chain_ids_per_request chains per request. */
  pages: number;
  total: number;
}

/**
 * The requests a run of `plan` is expected to send: its checks (`checks`: what planning sent),
 * its window edges and its first pages. A window holding more rows per chain than a page costs
 * more pages than this (`estimateRequests` counts them from densities); a dataset whose request
 * serves one block number (`requestServes: 'block'`) costs a request per block of its window.
 * Chains share a request up to `chainsPerRequest` (source.chain_ids_per_request: the setting's
 * value; a run that finds the service takes fewer halves it and sends more).
 */
export function estimateRun(plan: Plan, checks: number, opts: { batched?: boolean; chainsPerRequest: number }): RunEstimate {
  const edges = new Map<string, Axis>();
  /** The windows that share requests (one target and window, every chain), with the requests one chain-batch of them costs. */
  const groups = new Map<string, { chains: number; each: number }>();
  for (const u of opts.batched ? asBatches(plan.units) : plan.units) {
    const capabilities = capabilitiesOf(u.dataset);
    if (capabilities.extent !== 'snapshot') edges.set(`${u.chainId}:${u.axis}:${u.window.end}`, u.axis);
    const group = `${keyAcrossChains(parseStreamKey(u.unitKey)!)}|${u.windowKey}`;
    const each = capabilities.requestServes === 'block' ? length(u.window) : 1;
    const g = groups.get(group) ?? { chains: 0, each };
    groups.set(group, { chains: g.chains + 1, each });
  }
  const edgeRequests = [...edges.values()].reduce((n, axis) => n + (axis === 'time' ? 2 : 1), 0);
  const pages = [...groups.values()].reduce((n, g) => n + g.each * chainRequests(g.chains, opts.chainsPerRequest), 0);
  return { checks, edges: edgeRequests, pages, total: checks + edgeRequests + pages };
}

/**
 * The plan's windows as a run with output.batch_windows "on" exports them: the consecutive windows
 * of a unit in one cell as one window (src/run/window-batches.ts).
 */
function asBatches(units: readonly PlannedWindow[]): PlannedWindow[] {
  const byStream = new Map<string, PlannedWindow[]>();
  for (const u of units) {
    let list = byStream.get(u.unitKey);
    if (!list) byStream.set(u.unitKey, (list = []));
    list.push(u);
  }
  const out: PlannedWindow[] = [];
  for (const list of byStream.values()) {
    list.sort((a, b) => a.window.start - b.window.start);
    for (const u of list) {
      const last = out[out.length - 1];
      if (last?.unitKey === u.unitKey && batchable(capabilitiesOf(u.dataset)) && joinsBatch(u.axis, last.window, u.window)) {
        last.window = { start: last.window.start, end: u.window.end };
        last.windowKey = windowKey(last.window);
      } else out.push({ ...u, window: { ...u.window } });
    }
  }
  return out;
}
