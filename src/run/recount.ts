/**
 * Recount (`verify --recount`, `run --repair`): the files of each completed window against the
 * service's own count of the window's rows, so that what the files cannot show is found: a window
 * committed before the service had indexed it (or committed empty by an older version), a page a
 * broken proxy cut to `limit - 1` rows, rows the files lost.
 *
 * One `aggregate=count()` request, page 0, per window and target, with the window's bounds and the
 * unit's filters; the chains that share the window share the request (at most the run's chain ids
 * per request, source.chain_ids_per_request, 55 by default; `group_by chain_id`: one row per chain
 * that has rows). Cost: one request per (target, window) for each batch of that many chains, so
 * 1,000 windows of one chain cost 1,000 requests and of 55 chains at 55 a request about 1,000 / 55
 * per chain.
 *
 * A route whose server may count a row twice (the open-source indexer's wallet route is a UNION
 * ALL of a from- and a to-query: `group_by` with an aggregate fails there, and an ungrouped count
 * answers one row per half, a self-transfer in both) is asked ungrouped for one chain first: one
 * row (or none) means the count is exact and the rest is batched; two rows mean halves, and then
 * every window of that route is asked per chain and compared with its files' rows plus the rows
 * the halves take twice (read from the files), which is exact: every row counts once or twice,
 * so a row missing from the files always lowers their side. A route that counts in halves without
 * saying which rows it takes twice cannot be compared: its windows are reported not provable.
 *
 * A count that differs from the files is asked again and stands only when two answers agree
 * (`recountConfirmed`, at most three asks): one answer may come from a lagging replica, and acting on it (a window
 * called short by verify, its good files replaced by a repair or a settle) would follow a service
 * still inconsistent. Counts that disagree prove nothing: the window is reported not provable.
 */
import pLimit from 'p-limit';
import { errorMessage } from '../errors.js';
import { DATASETS, type DatasetName } from '../datasets/index.js';
import { ROW_COUNT_KEY } from '../datasets/aggregates.js';
import type { Recount } from '../datasets/recount.js';
import type { Job } from '../job/schema.js';
import { jobStreams } from '../plan/streams.js';
import { keyAcrossChains, parseStreamKey } from '../plan/stream-key.js';
import type { InsightClient } from '../source/client.js';
import { chainIdBatches, MAX_LIMIT, type ListQuery } from '../source/query.js';
import type { AggregationRow } from '../source/records.js';
import type { ObjectStore } from '../store/store.js';
import { readColumns } from '../state/exported-files.js';
import type { WindowRecord } from '../state/window-state.js';
import type { RecountedWindow, RecountReport, WindowFiles } from '../state/verify.js';

export interface RecountInput {
  /** The job with wallet names resolved (unit keys hold addresses). */
  job: Job;
  records: readonly WindowRecord[];
  /** What the windows' files hold now (verify knows which files are gone). */
  files: WindowFiles;
  client: InsightClient;
  store: ObjectStore;
  concurrency?: number;
}

/** A window of one target the chains of which share their count requests. */
interface Group {
  dataset: DatasetName;
  recount: Recount<object>;
  target: object;
  filters: Record<string, string>;
  axis: 'block' | 'time';
  /** The filters bounding the window on its axis. */
  bounds: { gte: string; lt: string };
  start: number;
  end: number;
  byChain: Map<number, WindowRecord>;
}

const COUNT_EXPRESSION = `count() AS ${ROW_COUNT_KEY}`;

export async function recountWindows(input: RecountInput): Promise<RecountReport> {
  const { results, skipped, requests } = await recountConfirmed(input);
  const checked = results.length;
  return {
    windows_checked: checked,
    windows_ok: results.filter((r) => r.status === 'ok').length,
    mismatches: results.filter((r) => r.status === 'short' || r.status === 'extra'),
    not_provable: results.filter((r) => r.status === 'not-provable'),
    skipped,
    requests,
    requests_per_1000_windows: checked === 0 ? null : Math.round((requests * 1000) / checked),
  };
}

/** How many times a window's count is asked at most before it is called not provable. */
const MAX_COUNT_ASKS = 3;

/**
 * Each window against the service's count (see the file comment): a count equal to the files
 * stands; one that differs is asked again until two answers agree (that count stands) or
 * MAX_COUNT_ASKS answers did not (not provable).
 */
export async function recountConfirmed(
  input: RecountInput,
): Promise<{ results: RecountedWindow[]; skipped: RecountReport['skipped']; requests: number }> {
  const keyOf = (unit: string, start: number, end: number) => `${unit}|${start}|${end}`;
  const differs = (r: RecountedWindow) => r.status === 'short' || r.status === 'extra';
  const first = await recountEach(input);
  const answers = new Map(first.results.map((r) => [keyOf(r.unit, r.window[0], r.window[1]), [r]]));
  const agreed = (list: RecountedWindow[]) => list.find((r, i) => list.slice(i + 1).some((o) => o.service_rows === r.service_rows));
  const unanswered = new Set<string>();
  const open = () =>
    [...answers].filter(([k, list]) => differs(list[0]!) && !agreed(list) && list.length < MAX_COUNT_ASKS && !unanswered.has(k));
  let requests = first.requests;
  for (let asked = open(); asked.length > 0; asked = open()) {
    const keys = new Set(asked.map(([k]) => k));
    const again = await recountEach({ ...input, records: input.records.filter((r) => keys.has(keyOf(r.unit_key, r.start, r.end))) });
    requests += again.requests;
    for (const r of again.results) answers.get(keyOf(r.unit, r.window[0], r.window[1]))?.push(r);
    // A window the service no longer answers for is asked no more.
    const answered = new Set(again.results.map((r) => keyOf(r.unit, r.window[0], r.window[1])));
    for (const k of keys) if (!answered.has(k)) unanswered.add(k);
  }
  const results = first.results.map((r): RecountedWindow => {
    const list = answers.get(keyOf(r.unit, r.window[0], r.window[1]))!;
    if (!differs(r)) return r;
    const stands = agreed(list);
    if (stands) return stands;
    const counts = list.map((x) => x.service_rows ?? 'none').join(', ');
    return { ...r, status: 'not-provable', reason: `${list.length} counts disagree: ${counts}` };
  });
  return { results, skipped: first.skipped, requests };
}

/** Each window against the service's count, once (see the file comment): every window of `records` the job has, in unit and start order. */
async function recountEach(
  input: RecountInput,
): Promise<{ results: RecountedWindow[]; skipped: RecountReport['skipped']; requests: number }> {
  const { groups, skipped } = groupRecords(input);
  let requests = 0;
  const ask = async (g: Group, chainIds: number[], grouped: boolean): Promise<AggregationRow[]> => {
    const q: ListQuery = {
      chainIds,
      filters: { ...g.filters, [g.bounds.gte]: g.start, [g.bounds.lt]: g.end },
      ...(grouped ? { groupBy: ['chain_id'] } : {}),
      aggregate: [COUNT_EXPRESSION],
      limit: MAX_LIMIT,
      page: 0,
    };
    requests++;
    return g.recount.aggregate(input.client, g.target, q);
  };

  const results: RecountedWindow[] = [];
  const judge = (g: Group, chainId: number, service: number | null, extra: number, reason?: string) => {
    const rec = g.byChain.get(chainId)!;
    const files = input.files.rows(rec);
    const base = { unit: rec.unit_key, chain_id: chainId, window: [rec.start, rec.end] as [number, number], files_rows: files };
    if (service === null) {
      results.push({ ...base, service_rows: null, status: 'not-provable', reason: reason ?? 'no count' });
      return;
    }
    // `extra`: rows of the files the service counted twice (a count in halves).
    const mine = files + extra;
    results.push({ ...base, service_rows: service - extra, status: mine === service ? 'ok' : mine < service ? 'short' : 'extra' });
  };

  // How each dataset's route counts: exact (batched by chain), or in halves (per chain).
  const modes = new Map<DatasetName, 'exact' | 'halves'>();
  const list = [...groups.values()];
  const probe = async (g: Group) => {
    if (modes.has(g.dataset)) return;
    if (!g.recount.countedTwice) {
      modes.set(g.dataset, 'exact');
      return;
    }
    // Asked ungrouped for one chain: the answer's shape says how the route counts (see the file comment).
    const chainId = g.byChain.keys().next().value!;
    const rows = await ask(g, [chainId], false);
    modes.set(g.dataset, rows.length === 2 ? 'halves' : 'exact');
    await judgeUngrouped(g, chainId, rows);
    g.byChain.delete(chainId);
  };
  const judgeUngrouped = (g: Group, chainId: number, rows: AggregationRow[]) => judgeOneChain(input, g, chainId, rows, judge);

  const limit = pLimit(input.concurrency ?? 8);
  // The first window of each dataset decides its mode before the others are asked.
  const firsts = new Map<DatasetName, Group>();
  for (const g of list) if (!firsts.has(g.dataset)) firsts.set(g.dataset, g);
  await Promise.all([...firsts.values()].map((g) => limit(() => probe(g))));
  const tasks: Promise<void>[] = [];
  for (const g of list) {
    const chains = [...g.byChain.keys()].sort((a, b) => a - b);
    if (modes.get(g.dataset) === 'halves') {
      for (const chainId of chains) tasks.push(limit(async () => judgeUngrouped(g, chainId, await ask(g, [chainId], false))));
      continue;
    }
    for (const batch of chainIdBatches(chains, input.client.chainIdsPerRequest)) {
      tasks.push(limit(async () => judgeGrouped(g, batch, await ask(g, batch, true), judge)));
    }
  }
  await Promise.all(tasks);

  results.sort((a, b) => a.unit.localeCompare(b.unit) || a.window[0] - b.window[0]);
  return {
    results,
    skipped: [...skipped].map(([unit, reason]) => ({ unit, reason })).sort((a, b) => a.unit.localeCompare(b.unit)),
    requests,
  };
}

/** An ungrouped count of one chain's window judged: one count row, or two halves that may hold a row twice (the files' rows counted twice read back). */
async function judgeOneChain(
  input: RecountInput,
  g: Group,
  chainId: number,
  rows: AggregationRow[],
  judge: (g: Group, chainId: number, service: number | null, extra: number, reason?: string) => void,
): Promise<void> {
  const counts = rows.map((r) => countOf(r));
  if (counts.some((n) => n === null) || rows.length > 2) {
    judge(g, chainId, null, 0, `the service answered ${rows.length} count rows of an unknown shape to an ungrouped count`);
    return;
  }
  const total = (counts as number[]).reduce((a, b) => a + b, 0);
  if (rows.length < 2) {
    judge(g, chainId, total, 0);
    return;
  }
  const twice = g.recount.countedTwice;
  if (!twice) {
    judge(g, chainId, null, 0, 'the service counts this route in two halves that may hold a row twice');
    return;
  }
  const rec = g.byChain.get(chainId)!;
  let extra = 0;
  try {
    for (const key of input.files.present(rec)) {
      for (const row of await readColumns(input.store, key, twice.columns)) if (twice.test(row, g.target)) extra++;
    }
  } catch (err) {
    judge(g, chainId, null, 0, `files not readable to count the rows the service counts twice: ${errorMessage(err).split('\n')[0]}`);
    return;
  }
  judge(g, chainId, total, extra);
}

/** The records to recount, in groups of one window of one stream across its chains (one count each); the units whose rows are not the service's one for one, apart. */
function groupRecords(input: RecountInput): { groups: Map<string, Group>; skipped: Map<string, string> } {
  const specs = new Map(jobStreams(input.job).map((s) => [s.unitKey, s]));
  const skipped = new Map<string, string>();
  const groups = new Map<string, Group>();
  for (const rec of input.records) {
    const spec = specs.get(rec.unit_key);
    if (!spec) continue; // a unit the job no longer has: verify lists it apart
    const dataset = spec.dataset;
    const collection = DATASETS[dataset].collection;
    if (collection.kind !== 'paged') {
      skipped.set(rec.unit_key, `${dataset} rows are not the service's rows one for one`);
      continue;
    }
    const unit = parseStreamKey(rec.unit_key)!;
    const axis = unit.axis;
    const sharedKey = `${keyAcrossChains(unit)}|${rec.start}|${rec.end}`;
    let group = groups.get(sharedKey);
    if (!group) {
      const target = collection.recount.target(spec.target);
      group = {
        dataset,
        recount: collection.recount,
        target,
        filters: spec.filters,
        axis,
        bounds: collection.windowFilters[axis],
        start: rec.start,
        end: rec.end,
        byChain: new Map(),
      };
      groups.set(sharedKey, group);
    }
    group.byChain.set(spec.chainId, rec);
  }
  return { groups, skipped };
}

/** The answer to a count grouped by chain, judged for each chain of `batch`. */
function judgeGrouped(
  g: Group,
  batch: number[],
  rows: AggregationRow[],
  judge: (g: Group, chainId: number, service: number | null, extra: number, reason?: string) => void,
): void {
  const counts = new Map<number, number>();
  let odd: string | null = null;
  for (const r of rows) {
    const chainId = Number(r.chain_id);
    const n = countOf(r);
    if (!batch.includes(chainId) || n === null || counts.has(chainId)) odd = JSON.stringify(r).slice(0, 200);
    else counts.set(chainId, n);
  }
  for (const chainId of batch) {
    if (odd) judge(g, chainId, null, 0, `the service's count answer holds a row of an unknown shape: ${odd}`);
    else judge(g, chainId, counts.get(chainId) ?? 0, 0);
  }
}

/** The count of an aggregation row (a number, or the indexer's decimal string); null when it is not one. */
function countOf(row: AggregationRow): number | null {
  const v = row[ROW_COUNT_KEY];
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}
