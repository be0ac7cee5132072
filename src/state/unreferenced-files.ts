/**
 * Data files of a job that no state names: what a crash left without its pending marker, the
 * files of a destination whose `_state/` was lost (copied without it, deleted), the merged files
 * of a compaction that lost a race. Readers of the folders see their rows beside the state's, so
 * a window written again beside them holds its rows twice.
 *
 * - verify names them (src/state/verify.ts) with the command that removes them;
 * - `remove-orphan-files` removes them (removeUnreferencedFiles; Iceberg tables: src/iceberg/);
 * - a run refuses to commit a window beside files of the same target and window that no state
 *   names (filesBesideWindow, through WindowState.commit) and says so before it exports anything
 *   when the job's state is empty (src/run/unreferenced-check.ts).
 *
 * A file is named when a completed window lists it or a pending marker (a commit under way, or
 * left by a crash: the next run of its owner removes those) names it, as one of its keys or of
 * the windows it replaces. The files are listed before the state is read: a commit writes its
 * pending marker before it uploads a file, and its completed record before it drops the marker,
 * so a file listed is named by what is read after, whatever commits meanwhile.
 */
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { parseFileName } from '../sink/file-names.js';
import { partitionKeyPattern } from '../sink/partitioning.js';
import type { ObjectStore } from '../store/store.js';
import { UnreferencedFilesError } from './errors.js';
import { parsePendingKeys, type WindowRecord, type WindowState } from './window-state.js';

/** File name stems (`<target>__...`) of the job's targets, as the datasets name their files (and as the records name them). */
export function targetFilePrefixes(job: Job, records: readonly WindowRecord[] = []): Set<string> {
  const out = new Set<string>();
  for (const t of job.targets) {
    if (t.kind === 'wallet') out.add(t.wallet);
    else if (t.kind === 'contract') for (const e of t.events) out.add(`${t.contract}_${e.topic0.slice(2, 10)}`);
    else out.add('chain');
  }
  for (const r of records) {
    for (const f of r.files) {
      const cut = stemOf(f.key);
      if (cut) out.add(cut);
    }
  }
  return out;
}

/** The `<target>` a data file's name starts with (`<target>__...`), or null. */
function stemOf(key: string): string | null {
  const base = key.slice(key.lastIndexOf('/') + 1);
  const cut = base.indexOf('__');
  return cut > 0 ? base.slice(0, cut) : null;
}

/**
 * Whether a key is a data file of the job: under the folders its partitioning makes (another job's
 * `{job}` folders, another template's, are not its own) and named after one of its targets.
 */
export function jobFileMatcher(job: Job, partitioning: string | null, records: readonly WindowRecord[] = []): (key: string) => boolean {
  const prefixes = targetFilePrefixes(job, records);
  const own = partitioning === null ? null : partitionKeyPattern(partitioning, job.name);
  return (key) => {
    if (key.startsWith('_state/') || (own && !own.test(key))) return false;
    const stem = stemOf(key);
    return stem !== null && prefixes.has(stem);
  };
}

/** A data file no state names. */
export interface UnreferencedFile {
  key: string;
  size: number;
}

/** Every key the job's state names: completed windows' files, pending markers' keys and the files of the windows they replace. */
export async function stateNamedKeys(state: WindowState): Promise<Set<string>> {
  const out = await state.pendingFileKeys();
  for await (const rec of state.completedRecords()) for (const f of rec.files) out.add(f.key);
  return out;
}

/** The job's data files that no state names, in key order (listed first, the state read after). */
export async function unreferencedDataFiles(o: {
  store: ObjectStore;
  state: WindowState;
  job: Job;
  partitioning: string;
}): Promise<{ listed: number; unreferenced: UnreferencedFile[] }> {
  const isJobFile = jobFileMatcher(o.job, o.partitioning);
  const files: UnreferencedFile[] = [];
  for await (const obj of o.store.list('', { etags: false })) if (isJobFile(obj.key)) files.push({ key: obj.key, size: obj.size });
  const named = await stateNamedKeys(o.state);
  return { listed: files.length, unreferenced: files.filter((f) => !named.has(f.key)) };
}

/** What remove-orphan-files did (or, dry run, would do) to a Parquet or NDJSON destination. */
export interface UnreferencedFilesReport {
  dry_run: boolean;
  /** Data files of the job's targets in its folders. */
  listed: number;
  /** Those no state names: deleted (dry run: that would be). */
  deleted: string[];
  bytes: number;
}

/** What remove-orphan-files of a job's data files (Parquet, NDJSON) is handed. */
export interface UnreferencedFilesInput {
  store: ObjectStore;
  state: WindowState;
  job: Job;
  partitioning: string;
  dryRun: boolean;
  logger: Logger;
  guard?: (() => void) | undefined;
}

/**
 * Deletes the job's data files no state names (remove-orphan-files for Parquet and NDJSON). The
 * caller holds the job's lease; `guard` is called before the deletes.
 */
export async function removeUnreferencedFiles(o: UnreferencedFilesInput): Promise<UnreferencedFilesReport> {
  const { listed, unreferenced } = await unreferencedDataFiles(o);
  const keys = unreferenced.map((f) => f.key);
  if (keys.length > 0 && !o.dryRun) {
    o.guard?.();
    await o.store.deleteMany(keys);
  }
  const bytes = unreferenced.reduce((n, f) => n + f.size, 0);
  o.logger.info(
    { listed, unreferenced: keys.length, bytes },
    o.dryRun ? 'files no state names that would be removed' : 'files no state names removed',
  );
  return { dry_run: o.dryRun, listed, deleted: keys, bytes };
}

/**
 * Files of the same target in the folders a window's new files go to, whose names give a window
 * overlapping this one, that neither this commit writes or replaces nor any pending marker of the
 * unit names: committing the window would leave their rows beside its own. One listing per folder
 * (of the target's files only); pending markers are read only when such a file is there.
 */
export async function filesBesideWindow(
  store: ObjectStore,
  stateRoot: string,
  commit: { unit_key: string; start: number; end: number; files: readonly { key: string }[] },
  replaced: ReadonlySet<string>,
): Promise<string[]> {
  const keys = commit.files.map((f) => f.key);
  const prefixes = new Set<string>();
  for (const key of keys) {
    const stem = stemOf(key);
    if (stem !== null) prefixes.add(`${key.slice(0, key.lastIndexOf('/') + 1)}${stem}__`);
  }
  const own = new Set(keys);
  const found: string[] = [];
  for (const prefix of prefixes) {
    for await (const obj of store.list(prefix, { etags: false })) {
      const name = parseFileName(obj.key);
      if (!name || own.has(obj.key) || replaced.has(obj.key)) continue;
      if (name.window.start < commit.end && commit.start < name.window.end) found.push(obj.key);
    }
  }
  if (found.length === 0) return found;
  const pending = new Set<string>();
  for await (const obj of store.list(`${stateRoot}/pending/${commit.unit_key}/`, { etags: false })) {
    const body = await store.get(obj.key);
    if (body) for (const k of parsePendingKeys(obj.key, body.body)) pending.add(k);
  }
  return found.filter((k) => !pending.has(k));
}

/**
 * The check a run makes before each window's first upload (WindowStateOptions.beforeUpload):
 * refused, exit 2, when files no state names lie beside the window (see filesBesideWindow).
 * `remove`: the command that removes them, for the hint.
 */
export function refuseFilesBeside(
  store: ObjectStore,
  jobName: string,
  remove: string,
): (
  commit: { unit_key: string; start: number; end: number; files: readonly { key: string }[] },
  replaced: ReadonlySet<string>,
) => Promise<void> {
  return async (commit, replaced) => {
    const beside = await filesBesideWindow(store, `_state/${jobName}`, commit, replaced);
    if (beside.length > 0) throw new UnreferencedFilesError(commit.unit_key, beside, remove);
  };
}
