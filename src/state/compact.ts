/**
 * Compaction: merges the small files of closed partitions into files of a target size.
 *
 * What is merged: runs of contiguous completed windows of one unit (dataset x target x chain)
 * whose files all lie in closed partitions. Such a run becomes ONE completed window covering the
 * same interval, with one file per partition; it replaces the old windows through the state's own
 * replacement protocol (src/state/window-state.ts), so every reader of state stays correct:
 *
 *   pending marker (new keys + the windows replaced, with their files)
 *     -> upload the merged files -> completed marker of the merged window
 *     -> delete the old windows' files and markers -> delete the pending marker
 *
 * A crash before the merged window's marker leaves the old windows intact and a pending marker
 * whose uploads the next run (or compact) deletes; a crash after it is finished the same way
 * (old files and markers deleted). No row is ever missing: old files go only after the merged
 * window is recorded. Readers that list the folders (warehouse globs) see a merged partition's
 * rows twice only between the merged file's upload and the deletion of its sources (one marker
 * write and one DeleteObjects later), or after a crash in that gap until the next run/compact.
 * Markers never share a file, so verify, --force and --rewind work on merged windows as on any.
 *
 * Closed partitions: dates strictly before the newest date the job has files for, or (with
 * `olderThanMs`) dates that ended more than that long ago. Files outside a `date=` folder are
 * never merged.
 *
 * An Iceberg destination (`iceberg`, src/iceberg/compaction.ts): readers go by the table's
 * snapshot, not the folders. The merged files are named with the compaction's run id and carry the
 * table's field ids; the files they replace are kept (older snapshots name them). Each table is
 * caught up with the state first, then gets one `replace` snapshot for the merges; a crash before
 * it leaves the previous snapshot current and whole, and the next compact or run commits it.
 */
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../log.js';
import { windowKey } from '../plan/index.js';
import { fileName, fileStem, parseFileName } from '../sink/file-names.js';
import type { Compression } from '../sink/sink.js';
import { openRunStagingDir } from '../sink/staging-dir.js';
import { contentTypeOfExtension } from '../sink/formats.js';
import type { ObjectStore } from '../store/store.js';
import { CompactionError } from './errors.js';
import { mergeFiles, type MergedField } from './merge-files.js';
import { newCompactionRunId } from './run-id.js';
import { WindowState, type FileRecord, type StagedFile, type WindowRecord } from './window-state.js';

export { CompactionError } from './errors.js';
export type { MergedField } from './merge-files.js';

export interface CompactOptions {
  store: ObjectStore;
  jobName: string;
  /** A merged file holds at most about this many bytes (sum of its sources' sizes). */
  targetBytes: number;
  /** And at most this many rows. */
  maxRows: number;
  /** Parquet compression of merged files (default zstd). */
  compression?: Compression;
  /** Closed = the partition's date ended at least this long ago (default: any date before the newest one). */
  olderThanMs?: number;
  /** Local directory for downloads and merged files. */
  stagingDir: string;
  /** Plan only: nothing is written. */
  dryRun?: boolean;
  /** Called before every state write (a held lease's assertHeld). */
  guard?: () => void;
  /** An Iceberg destination: what commits its tables and gives their field ids (see the file comment). */
  tables?: CompactionTables;
  /** The compaction's run id (default: a new one). */
  runId?: string;
  logger: Logger;
  now?: () => number;
}

export interface MergeGroup {
  unitKey: string;
  /** The merged window. */
  start: number;
  end: number;
  replaces: { start: number; end: number }[];
  sourceFiles: number;
  mergedFiles: number;
  rows: number;
  bytesBefore: number;
}

export interface CompactReport {
  job: string;
  run_id: string;
  dry_run: boolean;
  /** Partitions with a date before this one are closed. Null when there is none. */
  closed_before: string | null;
  windows_before: number;
  windows_after: number;
  files_before: number;
  files_after: number;
  bytes_before: number;
  bytes_after: number;
  groups: MergeGroup[];
  /** Pending commits of crashed runs finished or undone first (data files deleted). */
  recovered_files: number;
  /** An Iceberg destination: the table commits made (what was left uncommitted first, then the merges' replace snapshots). */
  iceberg_commits?: CompactionCommit[];
}

/** A table commit, as the report names it. */
export interface CompactionCommit {
  table: string;
  snapshot_id: number;
  metadata_key: string;
  operation: string;
  added_files: number;
  deleted_files: number;
}

/** What compaction does differently for an Iceberg destination (src/iceberg/compaction.ts makes it). */
export interface CompactionTables {
  /** What becomes of the files merged windows replace (WindowState's dropReplaced): kept. */
  dropReplaced: (keys: string[]) => Promise<void>;
  /** Each table made to list the state's live files; 'replace': refused if it would change the table's rows. */
  commit(state: WindowState, runId: string, operation?: 'replace'): Promise<CompactionCommit[]>;
  /** The current schema's fields (name, Iceberg field id and type) of the table a data file belongs to. */
  fieldsOf(key: string): Promise<readonly MergedField[]>;
}

const DATE_RE = /(?:^|\/)date=(\d{4}-\d{2}-\d{2})(?:\/|$)/;

function partitionOf(key: string): string {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function dateOf(key: string): string | null {
  return DATE_RE.exec(key)?.[1] ?? null;
}

/** A data file's target and extension (src/sink/file-names.ts). */
function nameParts(key: string): { stem: string; ext: string } | null {
  const parts = parseFileName(key);
  return parts ? { stem: parts.target, ext: parts.extension } : null;
}

function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Every completed window of the job, grouped by unit in key order, sorted. */
async function readWindows(state: WindowState): Promise<Map<string, WindowRecord[]>> {
  const out = new Map<string, WindowRecord[]>();
  for await (const rec of state.completedRecords()) {
    let list = out.get(rec.unit_key);
    if (!list) out.set(rec.unit_key, (list = []));
    list.push(rec);
  }
  return out;
}

interface Candidate {
  rec: WindowRecord;
  /** Files by partition. */
  parts: Map<string, FileRecord[]>;
  ext: string | null;
  stem: string | null;
}

/** Groups of windows to merge: contiguous, closed, same file kind, within the size caps. */
function planGroups(windows: WindowRecord[], isClosed: (key: string) => boolean, targetBytes: number, maxRows: number): Candidate[][] {
  const groups: Candidate[][] = [];
  let run: Candidate[] = [];
  const flush = () => {
    // Trailing empty windows stay out (they may be the newest part of the unit).
    while (run.length > 0 && run[run.length - 1]!.rec.files.length === 0) run.pop();
    if (run.length >= 2) groups.push(...binPack(run, targetBytes, maxRows));
    run = [];
  };
  for (const rec of windows) {
    const files = rec.files;
    const eligible = files.every((f) => isClosed(f.key) && nameParts(f.key) !== null);
    const kinds = new Set(files.map((f) => nameParts(f.key)?.ext ?? '?'));
    const stems = new Set(files.map((f) => nameParts(f.key)?.stem ?? '?'));
    const prev = run[run.length - 1];
    const cand: Candidate = {
      rec,
      parts: new Map(),
      ext: kinds.size === 1 ? [...kinds][0]! : null,
      stem: stems.size === 1 ? [...stems][0]! : null,
    };
    for (const f of files) {
      const p = partitionOf(f.key);
      if (!cand.parts.has(p)) cand.parts.set(p, []);
      cand.parts.get(p)!.push(f);
    }
    const sameKind = (a: string | null, b: string | null) => a === null || b === null || a === b;
    const fits =
      eligible &&
      (files.length === 0 || (cand.ext !== null && cand.stem !== null)) &&
      (!prev || (prev.rec.end === rec.start && sameKind(runExt(run), cand.ext) && sameKind(runStem(run), cand.stem)));
    if (!fits) {
      flush();
      if (eligible && (files.length === 0 || (cand.ext !== null && cand.stem !== null))) run.push(cand);
      continue;
    }
    run.push(cand);
  }
  flush();
  return groups;
}

function runExt(run: Candidate[]): string | null {
  return run.find((c) => c.ext !== null)?.ext ?? null;
}

function runStem(run: Candidate[]): string | null {
  return run.find((c) => c.stem !== null)?.stem ?? null;
}

/** Splits a run so that no merged file exceeds the caps; keeps only bins that reduce the file count. */
function binPack(run: Candidate[], targetBytes: number, maxRows: number): Candidate[][] {
  const bins: Candidate[][] = [];
  let bin: Candidate[] = [];
  let sizes = new Map<string, { bytes: number; rows: number }>();
  const close = () => {
    while (bin.length > 0 && bin[bin.length - 1]!.rec.files.length === 0) bin.pop();
    const files = bin.reduce((n, c) => n + c.rec.files.length, 0);
    const partitions = new Set(bin.flatMap((c) => [...c.parts.keys()]));
    if (bin.length >= 2 && partitions.size < files) bins.push(bin);
    bin = [];
    sizes = new Map();
  };
  for (const c of run) {
    const over = [...c.parts].some(([p, fs]) => {
      const s = sizes.get(p) ?? { bytes: 0, rows: 0 };
      return s.bytes + fs.reduce((n, f) => n + f.bytes, 0) > targetBytes || s.rows + fs.reduce((n, f) => n + f.rows, 0) > maxRows;
    });
    if (over) close();
    bin.push(c);
    for (const [p, fs] of c.parts) {
      const s = sizes.get(p) ?? { bytes: 0, rows: 0 };
      sizes.set(p, { bytes: s.bytes + fs.reduce((n, f) => n + f.bytes, 0), rows: s.rows + fs.reduce((n, f) => n + f.rows, 0) });
    }
  }
  close();
  return bins;
}

/**
 * Merges the small files of the job's closed partitions. Finishes or undoes crashed commits first
 * (the same recovery as a run's). The caller holds the job's lease.
 */
export async function compactJob(opts: CompactOptions): Promise<CompactReport> {
  const runId = opts.runId ?? newCompactionRunId();
  const log = opts.logger.child({ job: opts.jobName, run: runId });
  const tables = opts.tables ?? null;
  const state = new WindowState(opts.store, opts.jobName, {
    runId,
    guard: opts.guard,
    ...(tables ? { dropReplaced: tables.dropReplaced } : {}),
  });
  const recovered = opts.dryRun ? [] : await state.cleanPending();
  if (recovered.length > 0) log.warn({ files: recovered.length }, 'removed files of commits a crashed run did not finish');

  if (!opts.dryRun) await state.foldMarkers();
  // The merges' replace commit must change files only: what the state holds beyond the table goes in first.
  const commits = tables && !opts.dryRun ? await tables.commit(state, runId) : [];
  const byStream = await readWindows(state);
  const all = [...byStream.values()].flat();
  // A date is closed when it is before the cut-off day.
  const cutoff = closedBefore(all, opts);
  const isClosed = (key: string) => {
    const d = dateOf(key);
    return d !== null && cutoff !== null && d < cutoff;
  };

  const report: CompactReport = {
    job: opts.jobName,
    run_id: runId,
    dry_run: opts.dryRun === true,
    closed_before: cutoff,
    windows_before: all.length,
    windows_after: all.length,
    files_before: all.reduce((n, r) => n + r.files.length, 0),
    files_after: 0,
    bytes_before: all.reduce((n, r) => n + r.files.reduce((m, f) => m + f.bytes, 0), 0),
    bytes_after: 0,
    groups: [],
    recovered_files: recovered.length,
    ...(tables ? { iceberg_commits: commits } : {}),
  };
  let bytesDelta = 0;
  let filesDelta = 0;
  const staging = await openRunStagingDir(opts.stagingDir, runId, log);
  const engine: { duck: DuckDBInstance | null } = { duck: null };
  try {
    for (const [unitKey, windows] of byStream) {
      for (const group of planGroups(windows, isClosed, opts.targetBytes, opts.maxRows)) {
        const { info, sources, partitions } = describeGroup(unitKey, group);
        report.groups.push(info);
        report.windows_after -= group.length - 1;
        filesDelta += partitions.length - sources.length;
        if (opts.dryRun) continue;
        const merged = await stageMerged({ opts, runId, staging, engine, group, info, sources, partitions });
        await state.commit({ unit_key: unitKey, start: info.start, end: info.end, run_id: runId, files: merged });
        bytesDelta += merged.reduce((n, f) => n + f.bytes, 0) - info.bytesBefore;
        log.info(
          { unit: unitKey, windows: group.length, files: `${sources.length} -> ${merged.length}`, rows: info.rows },
          'windows merged',
        );
      }
    }
    await state.foldCommitted();
    if (tables && !opts.dryRun) commits.push(...(await tables.commit(state, runId, 'replace')));
  } finally {
    engine.duck?.closeSync();
    await rm(staging, { recursive: true, force: true });
  }
  report.files_after = report.files_before + filesDelta;
  report.bytes_after = report.bytes_before + (opts.dryRun ? 0 : bytesDelta);
  return report;
}

/** The day before which a partition is closed: the newest date the job has files for, or (olderThanMs) the day of now - olderThan. */
function closedBefore(all: WindowRecord[], opts: CompactOptions): string | null {
  const dates = all.flatMap((r) => r.files.map((f) => dateOf(f.key))).filter((d): d is string => d !== null);
  const newest = dates.reduce<string | null>((m, d) => (m === null || d > m ? d : m), null);
  let cutoff: string | null;
  if (opts.olderThanMs !== undefined) {
    // Day D ends at D+1 00:00, at least olderThan ago exactly when D is before the day of (now - olderThan).
    cutoff = utcDay((opts.now ?? Date.now)() - opts.olderThanMs);
  } else {
    cutoff = newest;
  }
  return cutoff;
}

/** A group of windows to merge as the report names it, with its source files and the partitions they lie in. */
function describeGroup(unitKey: string, group: Candidate[]): { info: MergeGroup; sources: FileRecord[]; partitions: string[] } {
  const start = group[0]!.rec.start;
  const end = group[group.length - 1]!.rec.end;
  const sources = group.flatMap((c) => c.rec.files);
  const partitions = [...new Set(sources.map((f) => partitionOf(f.key)))].sort();
  const info: MergeGroup = {
    unitKey,
    start,
    end,
    replaces: group.map((c) => ({ start: c.rec.start, end: c.rec.end })),
    sourceFiles: sources.length,
    mergedFiles: partitions.length,
    rows: group.reduce((n, c) => n + c.rec.rows, 0),
    bytesBefore: sources.reduce((n, f) => n + f.bytes, 0),
  };
  return { info, sources, partitions };
}

/** One group's merge (see compactJob). */
interface GroupMerge {
  opts: CompactOptions;
  runId: string;
  staging: string;
  /** The DuckDB instance the Parquet merges of the compaction share (made at the first). */
  engine: { duck: DuckDBInstance | null };
  group: Candidate[];
  info: MergeGroup;
  sources: FileRecord[];
  partitions: string[];
}

/** The merged files of one group, staged: one per partition, each holding exactly the rows of its sources. */
async function stageMerged(m: GroupMerge): Promise<StagedFile[]> {
  const { opts, runId, staging, group, sources, partitions } = m;
  const { unitKey, start, end } = m.info;
  const tables = opts.tables ?? null;
  const ext = runExt(group)!;
  const stem = runStem(group)!;
  // Spills (large merges) go to the staging directory, never to the working directory.
  if (ext.endsWith('.parquet'))
    m.engine.duck ??= await (
      await import('@duckdb/node-api')
    ).DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '512MB', temp_directory: join(staging, 'duckdb-spill') });
  const duck = m.engine.duck;
  const merged: StagedFile[] = [];
  for (const [i, partition] of partitions.entries()) {
    const inPart = sources.filter((f) => partitionOf(f.key) === partition);
    const name = fileName(fileStem(stem, windowKey({ start, end }), tables ? runId : undefined), i, ext);
    const key = `${partition === '' ? '' : `${partition}/`}${name}`;
    const path = join(staging, `${i}-${key.replace(/[^A-Za-z0-9_.=-]+/g, '_')}`);
    const fields = tables ? await tables.fieldsOf(key) : null;
    const { rows, digests } = await mergeFiles(opts.store, inPart, path, ext, staging, duck, opts.compression ?? 'zstd', fields);
    const want = inPart.reduce((n, f) => n + f.rows, 0);
    if (rows !== want) {
      throw new CompactionError(`Merged file of ${unitKey} holds ${rows} rows, its windows record ${want}`, {
        details: `${partition}: ${inPart.map((f) => f.key).join(', ')}`,
        hint: 'Nothing was changed. Run `insight-export verify` on the job to find the file that disagrees with its window.',
      });
    }
    merged.push({ key, rows, bytes: (await stat(path)).size, path, contentType: contentTypeOfExtension(ext)!, ...digests });
  }
  return merged;
}
