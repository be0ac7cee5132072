/**
 * What a run does about data files of its job that no state names (src/state/unreferenced-files.ts):
 *
 * - before it exports anything, when the job's state is empty (its first run, or `_state/` lost
 *   while the data stayed): the job's files are listed once. Files of the windows it is about to
 *   export (same table, chain, target, and a window overlapping one it plans) refuse the run, exit
 *   2, nothing written: written again beside them, their rows would be there twice. Others are
 *   warned of (log and report): readers see their rows though no state names them.
 * - before each window's first upload, whatever the state (WindowState's beforeUpload): the same
 *   target's files in the window's folders are listed, and a file of an overlapping window no state
 *   names refuses that window's commit, exit 2 (refuseFilesBeside).
 *
 * Not for Iceberg tables: their readers read the snapshots, never the folders, and older
 * snapshots name files the state no longer does (remove-orphan-files deals with those).
 */
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { parseFileName } from '../sink/file-names.js';
import { renderPartition, PARTITION_PLACEHOLDERS } from '../sink/partitioning.js';
import { UnreferencedFilesError } from '../state/errors.js';
import { unreferencedDataFiles, type UnreferencedFile } from '../state/unreferenced-files.js';
import type { WindowState } from '../state/window-state.js';
import type { ObjectStore } from '../store/store.js';
import type { ExportWindow } from './export-windows.js';

/** What a run reports of the files no state names it found (RunReport.unreferenced_files). */
export interface UnreferencedFound {
  files: number;
  /** A few of their keys. */
  examples: string[];
  /** The command that removes them. */
  remove: string;
}

const EXAMPLES = 5;

export function unreferencedFound(keys: readonly string[], remove: string): UnreferencedFound | null {
  return keys.length === 0 ? null : { files: keys.length, examples: keys.slice(0, EXAMPLES), remove };
}

/**
 * The check of a run whose job has no completed window yet (see the file comment). Returns what
 * it found that the run does not write beside; throws UnreferencedFilesError for what it would.
 */
export async function checkUnreferencedBeforeExport(o: {
  store: ObjectStore;
  state: WindowState;
  job: Job;
  partitioning: string;
  units: readonly ExportWindow[];
  remove: string;
  logger: Logger;
}): Promise<UnreferencedFound | null> {
  const { unreferenced } = await unreferencedDataFiles(o);
  if (unreferenced.length === 0) return null;
  const beside = unreferenced.filter((f) => writtenBeside(f, o.units, o.partitioning, o.job.name));
  if (beside.length > 0)
    throw new UnreferencedFilesError(
      `the windows of this run (its job's state is empty: a first run, or _state/ lost)`,
      beside.map((f) => f.key),
      o.remove,
    );
  const found = unreferencedFound(
    unreferenced.map((f) => f.key),
    o.remove,
  )!;
  o.logger.warn(
    { files: found.files, examples: found.examples, remove: found.remove },
    'data files no state names lie at the destination (not where this run writes): readers see their rows',
  );
  return found;
}

/** Whether a file lies where one of the units writes: its folders, its target, a window overlapping the unit's. */
function writtenBeside(f: UnreferencedFile, units: readonly ExportWindow[], partitioning: string, jobName: string): boolean {
  const name = parseFileName(f.key);
  if (!name) return false;
  const folder = f.key.slice(0, f.key.lastIndexOf('/') + 1);
  return units.some((u) => {
    const ds = u.dataset;
    if (ds.targetKey(u.target) !== name.target || !(name.window.start < u.end && u.start < name.window.end)) return false;
    const fixed = { dataset: u.table ?? ds.tableName(u.target), chain_id: u.chainId, target: name.target, job: jobName };
    return folderPattern(partitioning, fixed).test(folder);
  });
}

/** The folders a unit's files can lie in: the template with the unit's values, any date. */
function folderPattern(template: string, fixed: Record<string, string | number>): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // "@" is no character of a template (src/settings/partitioning.ts): it marks the placeholders left open.
  const marks = Object.fromEntries(PARTITION_PLACEHOLDERS.map((p) => [p, `@@${p}@@`]));
  const rendered = template === '' ? '' : `${renderPartition(template, { ...marks, ...fixed })}/`;
  return new RegExp(`^${escape(rendered).replace(/@@[a-z_]+@@/g, '[^/]+')}$`);
}
