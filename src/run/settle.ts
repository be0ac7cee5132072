/**
 * Windows settle. One answer proves only what the replica, cache or index shard that sent it had:
 * a window committed from a replica that lagged, or while the service was back-filling, is short
 * and nothing in its pages says so. So a window committed by a run is recounted by the next run
 * whatever its age, and again by the first run after its block time is older than the settle
 * horizon (`source.settle_horizon`, default 1d) when the next run found it within the horizon:
 * one `count()` per window batch and target for up to source.chain_ids_per_request chains (55 by
 * default), the request of `verify --recount` (src/run/recount.ts), against the rows its record
 * lists.
 *
 * - A window whose count differs, asked twice with the same answer, is exported again by this run
 *   through the replacement protocol (taken out of the completed windows, as `run --repair` does:
 *   its files are replaced whole, an Iceberg table's in one snapshot); being a new commit, the
 *   next run recounts it. Two answers that disagree prove nothing: asked again by the next run.
 * - One whose count is equal and whose block time is older than the horizon is settled
 *   (src/state/settled-windows.ts) and never recounted again.
 * - One whose count is equal within the horizon is recorded as recounted, and waits for the run
 *   that finds it older. Recounting it at every run between would cost a request per window and
 *   target each run (96 a day for a cron every 15 minutes) and promise nothing more: what settles
 *   a window is the count once the horizon has passed.
 *
 * A shard recounts the windows it owns. What a settled window promises: the service counted, once
 * after the run that committed it and once its block time was older than the horizon, exactly the
 * rows its files hold. What it cannot: a replica lagging by more than the horizon, answering both
 * the pages and the count from the same stale index, agrees with the files, and the window settles
 * short.
 */
import pLimit from 'p-limit';
import { errorMessage, exitCodeOf, InterruptedError } from '../errors.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { countCutsOnGrid, parseStreamKey, windowKey, type ChainHead, type Interval } from '../plan/index.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { InsightClient } from '../source/client.js';
import type { RecountedWindow } from '../state/verify.js';
import type { SettledUpdate } from '../state/settled-windows.js';
import type { ManifestWindow } from '../state/stream-manifest.js';
import { PreconditionFailedError } from '../store/errors.js';
import type { WindowRecord, WindowState } from '../state/window-state.js';
import { recountConfirmed } from './recount.js';
import { SettleAge } from './settle-age.js';
import { countRequests, pendingSettle, type PendingSettle, type PendingWindow } from './settle-pending.js';

/**
 * What settling did in a run (RunReport.settle), in windows of the job's chunk as the rest of the
 * report counts them (a batch committed as one stands for each window it covers; `differed` and
 * `would_recount` list the batches as recorded). The windows not settled that this run owns are
 * either recounted now or waiting; they end settled, exported again, pending or not provable:
 * recounted + waiting = settled + reexported + pending + not_provable.
 */
export interface SettleReport {
  /** source.settle_horizon, seconds. */
  horizon_s: number;
  /** Windows this run asked the service to count: committed by earlier runs, never recounted since, or recounted once and now older than the horizon. */
  recounted: number;
  /** Windows recounted equal by an earlier run whose block time is still within the horizon: not asked this run. */
  waiting: number;
  /** Counts equal and block time older than the horizon: recorded as settled, never recounted again. */
  settled: number;
  /** Counts differed: exported again by this run (through the replacement protocol; a failure is in `failed`). */
  reexported: number;
  /** Counts equal within the horizon (now or by an earlier run): recounted again by the first run after it is older. */
  pending: number;
  /** The service's count answer could not be compared with the files, or two counts disagreed (see the log): recounted by the next run. */
  not_provable: number;
  /** Count requests sent (retries not included), and the block lookups that told how old block windows are. */
  requests: number;
  /** The windows whose count differed, at most DIFFERED_LISTED. */
  differed: { unit: string; window: [number, number]; files_rows: number; service_rows: number }[];
  /** The recount failed (the service kept failing, or refused the count): its windows stay as they were; the run's exit code is at least `exit_code`. */
  error?: string;
  exit_code?: number;
  /** `run --dry-run`: the windows a run would recount, and about how many count requests. */
  would_recount?: { unit: string; window: [number, number] }[];
  would_request?: number;
}

const DIFFERED_LISTED = 100;
/** Windows whose count differed logged one by one; the rest are counted in one line. */
const DIFFERED_LOGGED = 20;
/** Records read and settled records written at once. */
const STATE_AT_ONCE = 16;

export interface SettleInput {
  /** The job with wallet names resolved (unit keys hold addresses). */
  job: Job;
  state: WindowState;
  client: InsightClient;
  /** The completed windows left after --rewind, --repair and the reorganisation check. */
  completed: Map<string, Interval[]>;
  owns: (unitKey: string, window: Interval) => boolean;
  horizonS: number;
  /** The run's start, unix seconds. */
  now: number;
  /** `to: latest`: the chain heads the plan searches (shared). */
  head?: ((chainId: number) => Promise<ChainHead>) | undefined;
  blocks: BlockLookup;
  dryRun: boolean;
  signal?: AbortSignal | undefined;
  logger: Logger;
  guard?: () => void;
}

/** A window not settled, with its record, whether an earlier run recounted it, and whether it is older than the horizon now. */
interface Candidate {
  rec: WindowRecord;
  recounted: boolean;
  old: boolean;
}

/** Recounts the windows not settled (see the file comment); the windows whose count differs are taken out of `completed`. */
export async function settleWindows(input: SettleInput): Promise<{ completed: Map<string, Interval[]>; report: SettleReport }> {
  const { job, state, logger } = input;
  const report = emptySettleReport(input.horizonS);
  const pending = await pendingSettle(job, state, input.completed, input.owns, input.guard);
  for (const u of pending.unreadable)
    logger.warn({ unit: u.unit, problem: u.problem }, 'settled record not usable: its windows are recounted');
  if (pending.windows.length === 0) return { completed: input.completed, report };
  const before = input.client.stats.requests;
  const candidates = await withAge(input, await pendingRecords(state, pending));
  const asked = (c: Candidate) => !c.recounted || c.old;
  const ask = candidates.filter(asked);
  const count = windowsOf(job);
  const waiting = sum(
    candidates.filter((c) => !ask.includes(c)).map((c) => c.rec),
    count,
  );
  if (input.dryRun) {
    const would_recount = ask.map((c) => ({ unit: c.rec.unit_key, window: [c.rec.start, c.rec.end] as [number, number] }));
    const would_request = countRequests(
      ask.map((c) => c.rec),
      input.client.chainIdsPerRequest,
    );
    return { completed: input.completed, report: { ...report, waiting, pending: waiting, would_recount, would_request } };
  }
  let results: RecountedWindow[];
  try {
    results = await countConfirmed(
      input,
      ask.map((c) => c.rec),
    );
  } catch (err) {
    if (err instanceof InterruptedError || input.signal?.aborted) throw err;
    const error = errorMessage(err).split('\n')[0]!;
    logger.warn({ windows: ask.length, err: error }, 'windows not recounted: the next run recounts them');
    const requests = input.client.stats.requests - before;
    return { completed: input.completed, report: { ...report, waiting, pending: waiting, requests, error, exit_code: exitCodeOf(err) } };
  }
  const outcome = classify(results, new Map(ask.map((c) => [`${c.rec.unit_key}|${c.rec.start}|${c.rec.end}`, c])));
  await recordOutcome(input, pending, outcome);
  const out: SettleReport = {
    ...report,
    recounted: sum(results.map(intervalOf), count),
    waiting,
    settled: sum(
      outcome.settled.map((c) => c.rec),
      count,
    ),
    reexported: sum(outcome.differed.map(intervalOf), count),
    pending:
      sum(
        outcome.recounted.map((c) => c.rec),
        count,
      ) + waiting,
    not_provable: sum(outcome.notProvable.map(intervalOf), count),
    requests: input.client.stats.requests - before,
    differed: outcome.differed
      .slice(0, DIFFERED_LISTED)
      .map((d) => ({ unit: d.unit, window: d.window, files_rows: d.files_rows, service_rows: d.service_rows! })),
  };
  logSettle(logger, out, outcome);
  return { completed: withoutDiffered(input.completed, outcome.differed), report: out };
}

/** The windows of the job's grid a record stands for, as the run report counts windows (a batch: each window it covers). */
const windowsOf =
  (job: Job) =>
  (w: Interval): number =>
    job.range ? Math.max(1, countCutsOnGrid(w, job.range.chunk)) : 1;
const sum = (list: Interval[], count: (w: Interval) => number) => list.reduce((n, w) => n + count(w), 0);
const intervalOf = (r: RecountedWindow): Interval => ({ start: r.window[0], end: r.window[1] });

export function emptySettleReport(horizonS: number): SettleReport {
  return {
    horizon_s: horizonS,
    recounted: 0,
    waiting: 0,
    settled: 0,
    reexported: 0,
    pending: 0,
    not_provable: 0,
    requests: 0,
    differed: [],
  };
}

/** The windows against the service's count, a differing count asked twice (src/run/recount.ts). */
async function countConfirmed(input: SettleInput, records: WindowRecord[]): Promise<RecountedWindow[]> {
  const files = {
    rows: (r: WindowRecord) => r.files.reduce((n, f) => n + f.rows, 0),
    present: (r: WindowRecord) => r.files.map((f) => f.key),
  };
  const { job, client } = input;
  return (await recountConfirmed({ job, records, files, client, store: input.state.store, concurrency: client.maxInFlight })).results;
}

/** The records of the windows not settled (a marker's window is judged by its record's run). */
async function pendingRecords(state: WindowState, pending: PendingSettle): Promise<Omit<Candidate, 'old'>[]> {
  const limit = pLimit(STATE_AT_ONCE);
  const read = await Promise.all(pending.windows.map((w) => limit(() => state.readCompleted(w.unit_key, w.start, w.end))));
  const out: Omit<Candidate, 'old'>[] = [];
  read.forEach((rec, i) => {
    const w: PendingWindow = pending.windows[i]!;
    if (!rec) return;
    if (w.run_id !== undefined) return void out.push({ rec, recounted: w.recounted });
    const lists = pending.read.get(w.unit_key);
    if (lists?.settled.get(windowKey(w)) === rec.run_id) return;
    out.push({ rec, recounted: lists?.recounted.get(windowKey(w)) === rec.run_id });
  });
  return out;
}

/** Each window with whether its block time is older than the horizon now (src/run/settle-age.ts). */
async function withAge(input: SettleInput, windows: Omit<Candidate, 'old'>[]): Promise<Candidate[]> {
  const age = new SettleAge({ horizonS: input.horizonS, now: input.now, head: input.head, blocks: input.blocks });
  const byChainAxis = new Map<string, (Omit<Candidate, 'old'> & Interval)[]>();
  for (const c of windows) {
    const unit = parseStreamKey(c.rec.unit_key)!;
    const key = `${unit.chainId}/${unit.axis}`;
    let list = byChainAxis.get(key);
    if (!list) byChainAxis.set(key, (list = []));
    list.push({ ...c, start: c.rec.start, end: c.rec.end });
  }
  const old = new Set<WindowRecord>();
  for (const [key, list] of byChainAxis) {
    const [chain, axis] = key.split('/') as [string, 'block' | 'time'];
    for (const c of await age.older(Number(chain), axis, list)) old.add(c.rec);
  }
  return windows.map((c) => ({ ...c, old: old.has(c.rec) }));
}

interface Outcome {
  settled: Candidate[];
  recounted: Candidate[];
  differed: RecountedWindow[];
  notProvable: RecountedWindow[];
}

/** Each recounted window: differed, not provable, or equal (then settled when older than the horizon, else recounted). */
function classify(results: RecountedWindow[], asked: Map<string, Candidate>): Outcome {
  const equal = results.filter((r) => r.status === 'ok').map((r) => asked.get(`${r.unit}|${r.window[0]}|${r.window[1]}`)!);
  return {
    settled: equal.filter((c) => c.old),
    recounted: equal.filter((c) => !c.old),
    differed: results.filter((r) => r.status === 'short' || r.status === 'extra'),
    notProvable: results.filter((r) => r.status === 'not-provable'),
  };
}

/** Adds the windows settled and recounted to their units' records, each named by the run that committed it. */
async function recordOutcome(input: SettleInput, pending: PendingSettle, outcome: Outcome): Promise<void> {
  const byStream = new Map<string, { settled: ManifestWindow[]; recounted: ManifestWindow[] }>();
  const add = (list: 'settled' | 'recounted', c: Candidate) => {
    const u = byStream.get(c.rec.unit_key) ?? { settled: [], recounted: [] };
    u[list].push({ start: c.rec.start, end: c.rec.end, run_id: c.rec.run_id });
    byStream.set(c.rec.unit_key, u);
  };
  for (const c of outcome.settled) add('settled', c);
  // A window recounted again within the horizon is on the list already.
  for (const c of outcome.recounted) if (!c.recounted) add('recounted', c);
  const { state, owns } = input;
  // A window recorded before stays while it is still the commit its run made (or another shard's to judge).
  const keep = (unitKey: string) => (w: ManifestWindow) =>
    !owns(unitKey, w) || state.commitOf(unitKey, w.start, w.end) === `run ${w.run_id}`;
  const limit = pLimit(STATE_AT_ONCE);
  const write = async (unitKey: string, update: SettledUpdate) => {
    try {
      await pending.records.update(unitKey, update, keep(unitKey));
    } catch (err) {
      // Other writers of the unit (shards) kept winning: its windows are recounted again, nothing is lost.
      if (!(err instanceof PreconditionFailedError)) throw err;
      input.logger.warn({ unit: unitKey, err: errorMessage(err) }, 'settled record not written: its windows are recounted by the next run');
    }
  };
  await Promise.all([...byStream].map(([unitKey, update]) => limit(() => write(unitKey, update))));
}

function withoutDiffered(completed: Map<string, Interval[]>, differed: RecountedWindow[]): Map<string, Interval[]> {
  const out = new Map(completed);
  for (const d of differed)
    out.set(
      d.unit,
      (out.get(d.unit) ?? []).filter((iv) => iv.start !== d.window[0] || iv.end !== d.window[1]),
    );
  return out;
}

function logSettle(logger: Logger, r: SettleReport, outcome: Outcome): void {
  logger.info(
    {
      recounted: r.recounted,
      waiting: r.waiting,
      settled: r.settled,
      reexported: r.reexported,
      pending: r.pending,
      not_provable: r.not_provable,
      requests: r.requests,
      horizon_s: r.horizon_s,
    },
    'windows of earlier runs recounted against the service',
  );
  for (const d of outcome.differed.slice(0, DIFFERED_LOGGED))
    logger.warn(
      { unit: d.unit, window: d.window, files_rows: d.files_rows, service_rows: d.service_rows },
      "a window's count differs from its files: exporting it again",
    );
  if (outcome.differed.length > DIFFERED_LOGGED)
    logger.warn({ windows: outcome.differed.length - DIFFERED_LOGGED }, 'more windows whose count differs: exporting them again');
  for (const n of outcome.notProvable.slice(0, DIFFERED_LOGGED))
    logger.warn({ unit: n.unit, window: n.window, reason: n.reason }, 'window not provable by a recount: recounted again by the next run');
}
