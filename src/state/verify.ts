/**
 * Completeness proof of a destination against a job and its state (`insight-export verify`):
 *
 * - every window the job plans is covered by completed windows: no gaps (and says which windows
 *   are missing), no two completed windows of a unit overlap (rows would be there twice);
 * - every file a completed window lists exists, has the recorded size and (unless `quick`) the
 *   recorded row count, read from the file itself (its item_id column), and no item_id twice in
 *   a file or in a window;
 * - no data file of the job's targets is left that no completed window lists (what a crashed run
 *   uploaded: a reader would see its rows), no pending commit is left, and who holds the lease.
 *
 * For `to: latest` the planned range of a chain ends at the newest point exported on that chain
 * (no service is asked for the head): a unit behind the others on its chain shows its missing
 * windows. Units of snapshot datasets are checked for their files only.
 */
import { ContentCheck } from './verify-content.js';
import { capabilitiesOf, isSnapshot } from '../datasets/index.js';
import type { Axis } from '../job/schema.js';
import { formatInterval } from '../plan/format-interval.js';
import {
  addTallies,
  cellsOf,
  cutOnGrid,
  intersect,
  merge,
  planJob,
  subtract,
  tallyWindows,
  totalLength,
  windowCells,
  type ChainHead,
  type Interval,
  type Plan,
  type PlanOptions,
  type StreamCoverage,
  type WindowTally,
} from '../plan/index.js';
import { pendingOf } from './verify-pending.js';
import { isSnapshotStream, parseStreamKey } from '../plan/stream-key.js';
import { batchable, batchIntervals } from '../plan/batch-cells.js';
import type { ObjectStore } from '../store/store.js';
import { parseLease, takeable } from './lease.js';
import { parseMarkerPlace, WindowState, type PendingMarker, type WindowRecord } from './window-state.js';
import { formatOfKey } from './destination-format.js';
import { jobFileMatcher } from './unreferenced-files.js';
import { checkListedFiles } from './verify-files.js';
import {
  damagedWindows,
  type RecountReport,
  type StreamSummary,
  type VerifyOptions,
  type VerifyProblem,
  type VerifyReport,
} from './verify-report.js';

export {
  damagedWindows,
  WINDOW_DAMAGE,
  type RecountedWindow,
  type RecountReport,
  type StreamSummary,
  type VerifyOptions,
  type VerifyProblem,
  type VerifyProblemKind,
  type VerifyReport,
  type PendingTail,
  type WindowFiles,
} from './verify-report.js';

export async function verifyDestination(opts: VerifyOptions): Promise<VerifyReport> {
  const { store, job } = opts;
  const state = new WindowState(store, job.name);
  const problems: VerifyProblem[] = [];
  const completed = await state.completedIntervals();
  const { units, otherStreams, plan } = await checkPlannedWindows(opts, completed, problems);
  const { records, rows } = await readCompletedMarkers(state, problems, opts.recount !== undefined);
  const listed = new Map<string, { rec: WindowRecord; rows: number; bytes: number }>();
  for (const rec of records) for (const f of rec.files) listed.set(f.key, { rec, rows: f.rows, bytes: f.bytes });
  const format = opts.output?.format;
  const otherFormat = format ? [...listed.keys()].filter((k) => (formatOfKey(k) ?? format) !== format) : [];
  if (otherFormat.length > 0) {
    problems.push({
      kind: 'other-format',
      key: otherFormat[0]!,
      message: `${otherFormat.length} file(s) are not ${format}, the job's format: a run refuses this destination (keep the format it holds, or run with --force to export every window again as ${format})`,
    });
  }

  const within = opts.within;
  const checked = within ? records.filter((r) => r.start < within.end && within.start < r.end) : records;
  const content = new ContentCheck(opts.content === true);
  const { counted, distinct, checkedRows, present } = await checkListedFiles(opts, checked, problems, content);
  let recount: RecountReport | undefined;
  if (opts.recount) {
    recount = await opts.recount(checked, {
      rows: (rec) => rec.files.reduce((n, f) => n + (present.get(f.key) ?? 0), 0),
      present: (rec) => rec.files.map((f) => f.key).filter((k) => present.has(k)),
    });
    for (const m of recount.mismatches) {
      const diff = m.files_rows - m.service_rows!;
      problems.push({
        kind: 'recount-mismatch',
        unit: m.unit,
        window: m.window,
        message: `files hold ${m.files_rows} rows, the service counts ${m.service_rows} (${diff < 0 ? `${-diff} missing` : `${diff} more than the service has`})`,
      });
    }
  }
  const pendingKeys = await checkPendingCommits(store, state, problems);
  const unreferenced = await checkUnreferencedFiles(opts, records, listed, pendingKeys, problems);
  const lease = await currentLease(opts, state);

  const tally = addTallies(
    units.map((u) => ({
      planned: u.windows_planned,
      completed: u.windows_completed,
      missing: u.windows_missing,
      pending: u.windows_pending,
    })),
  );
  const damaged = job.range ? damagedCount(plan, completed, problems, job.range.chunk) : damagedWindows(problems).length;
  problems.sort(
    (a, b) =>
      (a.unit ?? '').localeCompare(b.unit ?? '') || (a.window?.[0] ?? 0) - (b.window?.[0] ?? 0) || (a.key ?? '').localeCompare(b.key ?? ''),
  );
  return {
    job: job.name,
    destination: store.location,
    ok: problems.length === 0,
    units,
    windows: { ...tally, damaged },
    pending: pendingOf(plan, units, job),
    files: { listed: listed.size, checked_rows: checkedRows, unreferenced },
    content: content.report,
    rows: {
      recorded: rows,
      counted: opts.quick ? null : counted,
      distinct: opts.quick ? null : distinct,
    },
    lease,
    other_units: otherStreams,
    ...(recount ? { recount } : {}),
    problems,
  };
}

/** Planned windows against completed windows: missing, pending and overlapping windows, per stream. */
async function checkPlannedWindows(
  opts: VerifyOptions,
  completed: Map<string, Interval[]>,
  problems: VerifyProblem[],
): Promise<{ units: StreamSummary[]; otherStreams: string[]; plan: Plan }> {
  const { job } = opts;
  // Only what is missing becomes a window of the plan: a complete job of a million windows plans none.
  const plan = await planJob(job, {
    completed: (unitKey) => completed.get(unitKey) ?? [],
    ...verifiedRange(opts, completed),
    now: opts.now ? () => opts.now!() / 1000 : undefined,
  });
  const units: StreamSummary[] = [];
  const jobStreamKeys = new Set<string>();
  for (const c of plan.coverage) {
    jobStreamKeys.add(c.unitKey);
    const done = completed.get(c.unitKey) ?? [];
    problems.push(...overlapsOf(c, done));
    if (isSnapshot(c.dataset)) continue;
    const counts = perStream(tallyWindows(c, done, job.range!.chunk));
    const range = c.range ? ([c.range.start, c.range.end] as [number, number]) : null;
    const pending = c.pending.map((w): [number, number] => [w.start, w.end]);
    if (!c.range) {
      if (job.range?.to === 'latest') {
        problems.push({ kind: 'nothing-exported', unit: c.unitKey, message: `nothing exported yet on chain ${c.chainId}` });
      }
      units.push({ unit: c.unitKey, range, ...counts, missing: [], pending });
      continue;
    }
    let missing = subtract([c.range], done).flatMap((gap) => cutOnGrid(gap, job.range!.chunk));
    if (opts.output?.batchWindows === 'on' && batchable(capabilitiesOf(c.dataset))) missing = batchIntervals(missing, c.axis);
    const pairs = missing.map((w): [number, number] => [w.start, w.end]);
    if (pairs.length > 0) {
      problems.push({
        kind: 'missing-windows',
        unit: c.unitKey,
        windows: pairs,
        message: `${counts.windows_missing} window(s) missing: ${describeWindows(c.axis, merge(missing))}`,
      });
    }
    units.push({ unit: c.unitKey, range, ...counts, missing: pairs, pending });
  }
  const otherStreams = [...completed.keys()].filter((k) => !jobStreamKeys.has(k)).sort();
  return { units, otherStreams, plan };
}

/** A stream's window counts as the report names them. */
function perStream(t: WindowTally): Pick<StreamSummary, 'windows_planned' | 'windows_completed' | 'windows_missing' | 'windows_pending'> {
  return { windows_planned: t.planned, windows_completed: t.completed, windows_missing: t.missing, windows_pending: t.pending };
}

/**
 * Where the range verify expects ends on each chain. A fixed `to`: as a run plans it, with the
 * service's head (`opts.service`): windows past the head minus the safety lag are pending, not
 * missing (without it the whole range is expected). `to: latest`: at the chain's newest exported
 * point (no service is asked), so a stream behind the others on its chain shows its missing windows.
 */
function verifiedRange(opts: VerifyOptions, completed: Map<string, Interval[]>): Pick<PlanOptions, 'latest' | 'serves' | 'clampFixedTo'> {
  const range = opts.job.range;
  if (range && range.to !== 'latest') return opts.service ? { ...opts.service } : { clampFixedTo: false };
  const axis = range?.by ?? 'time';
  const frontier = new Map<number, number>();
  for (const [unitKey, list] of completed) {
    const unit = parseStreamKey(unitKey);
    if (!unit || unit.axis !== axis || isSnapshotStream(unit)) continue;
    frontier.set(unit.chainId, Math.max(frontier.get(unit.chainId) ?? -Infinity, ...list.map((i) => i.end)));
  }
  const lag = range?.safety_lag ?? 0;
  return {
    latest: async (chainId): Promise<ChainHead> => {
      // The head that makes the planned range end exactly at the chain's newest exported point.
      const f = frontier.get(chainId);
      const head = f === undefined ? (range?.from ?? 0) + lag - 1 : f + lag - 1;
      return axis === 'block' ? { block: head } : { time: head };
    },
  };
}

/** Completed windows of a stream that overlap (their rows are there twice). */
function overlapsOf(c: StreamCoverage, done: readonly Interval[]): VerifyProblem[] {
  const out: VerifyProblem[] = [];
  for (let i = 1; i < done.length; i++) {
    const a = done[i - 1]!;
    const b = done[i]!;
    if (b.start < a.end) {
      out.push({
        kind: 'overlap',
        unit: c.unitKey,
        window: [b.start, Math.min(a.end, b.end)],
        message: `completed windows ${formatInterval(c.axis, a)} and ${formatInterval(c.axis, b)} overlap: their rows are there twice`,
      });
    }
  }
  return out;
}

/** Completed windows (grid windows, as the tally counts them) of the job's streams that a damaged record covers. */
function damagedCount(plan: Plan, completed: Map<string, Interval[]>, problems: readonly VerifyProblem[], chunk: number): number {
  const byUnit = new Map<string, Interval[]>();
  for (const d of damagedWindows(problems)) byUnit.set(d.unit, [...(byUnit.get(d.unit) ?? []), { start: d.window[0], end: d.window[1] }]);
  let n = 0;
  for (const c of plan.coverage) {
    const damaged = byUnit.get(c.unitKey);
    if (!damaged) continue;
    if (isSnapshot(c.dataset)) continue;
    const cells = windowCells(c, completed.get(c.unitKey) ?? [], chunk);
    if (cells) n += totalLength(subtract(intersect(cellsOf(damaged, chunk), [cells.whole]), [...cells.missing, ...cells.pending]));
  }
  return n;
}

/**
 * Completed windows (manifests and markers), checked against their names and their own row counts.
 * Windows without files are not kept unless `keepEmpty` (the recount asks about each).
 */
async function readCompletedMarkers(
  state: WindowState,
  problems: VerifyProblem[],
  keepEmpty: boolean,
): Promise<{ records: WindowRecord[]; rows: number }> {
  const records: WindowRecord[] = [];
  let rows = 0;
  const bad = (key: string, message: string, unit: string | null) =>
    problems.push({ kind: 'bad-marker', key, ...(unit === null ? {} : { unit }), message });
  for await (const rec of state.completedRecords(bad)) {
    const fileRows = rec.files.reduce((n, f) => n + f.rows, 0);
    if (fileRows !== rec.rows) {
      problems.push({
        kind: 'bad-marker',
        key: state.completedKey(rec.unit_key, rec.start, rec.end),
        unit: rec.unit_key,
        window: [rec.start, rec.end],
        message: `marker records ${rec.rows} rows but its files add up to ${fileRows}`,
      });
    }
    rows += rec.rows;
    if (keepEmpty || rec.files.length > 0) records.push(rec);
  }
  return { records, rows };
}

/** Pending commits left; returns the keys they name. */
async function checkPendingCommits(store: ObjectStore, state: WindowState, problems: VerifyProblem[]): Promise<Set<string>> {
  const pendingPrefix = `${state.root}/pending/`;
  const pendingKeys = new Set<string>();
  for await (const obj of store.list(pendingPrefix, { etags: false })) {
    const got = await store.get(obj.key).catch(() => null);
    let marker: PendingMarker | null;
    try {
      marker = got ? (JSON.parse(got.body.toString('utf8')) as PendingMarker) : null;
    } catch {
      marker = null;
    }
    const keys = Array.isArray(marker?.keys) ? marker.keys : [];
    for (const k of keys) pendingKeys.add(k);
    problems.push({
      kind: 'pending-commit',
      key: obj.key,
      unit: parseMarkerPlace(obj.key.slice(pendingPrefix.length)).unitKey,
      message: `a commit of ${keys.length} file(s) was started and not finished (a run is in progress, or crashed: the next run removes its files)`,
    });
  }
  return pendingKeys;
}

/** Data files of the job's targets that no completed window lists. */
async function checkUnreferencedFiles(
  opts: VerifyOptions,
  records: WindowRecord[],
  listed: Map<string, unknown>,
  pendingKeys: Set<string>,
  problems: VerifyProblem[],
): Promise<number> {
  // Files in folders this job's partitioning never makes (another job's `{job}` folders, another template) are not its own.
  const isJobFile = jobFileMatcher(opts.job, opts.output?.partitioning ?? null, records);
  let unreferenced = 0;
  for await (const obj of opts.store.list('', { etags: false })) {
    if (listed.has(obj.key) || opts.retained?.has(obj.key) || !isJobFile(obj.key)) continue;
    unreferenced++;
    const pending = pendingKeys.has(obj.key);
    problems.push({
      kind: 'unreferenced-file',
      key: obj.key,
      message: pending
        ? 'file of an unfinished commit: readers see rows that no completed window lists (the next run removes it)'
        : 'no completed window lists this file: readers see rows the state does not know of (left by a crash, a lost _state/ folder, a compaction that lost a race, or another job writing the same target here)',
      ...(pending ? { pending } : {}),
    });
  }
  return unreferenced;
}

/** Who holds the job's lease (an active holder before an expired one). */
async function currentLease(opts: VerifyOptions, state: WindowState): Promise<VerifyReport['lease']> {
  const { store } = opts;
  let lease: VerifyReport['lease'] = null;
  for (const name of await leaseObjects(store, state.root)) {
    const got = await store.get(name);
    const rec = got ? parseLease(got.body) : null;
    if (!rec) continue;
    const now = opts.now?.() ?? Date.now();
    const active = !takeable(rec, now, { host: '', bootId: null }, () => true);
    if (!lease || active) lease = { ...rec, active };
  }
  return lease;
}

/** `[a, b) [c, d)` (dates, or block numbers), at most 8 of them. */
function describeWindows(axis: Axis, ws: Interval[]): string {
  const shown = ws
    .slice(0, 8)
    .map((w) => formatInterval(axis, w))
    .join(' ');
  return ws.length > 8 ? `${shown} and ${ws.length - 8} more range(s)` : shown;
}

async function leaseObjects(store: ObjectStore, root: string): Promise<string[]> {
  const out: string[] = [];
  for await (const obj of store.list(`${root}/lease`, { etags: false }))
    if (obj.key.endsWith('.json') && !obj.key.slice(root.length + 1).includes('/')) out.push(obj.key);
  return out;
}
