import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { makeDirs } from '../make-dirs.js';
import { ExitCode } from '../errors.js';
import { FileWriteError } from './errors.js';
import { isDeadHere, pidAlive, thisProcess, type ProcessIdentity } from '../process-identity.js';

/**
 * Every run stages its files in `<staging_dir>/<run id>/` and removes the folder when it ends.
 * A run that was killed (SIGKILL, out of memory, a lost machine) cannot: its folder records its
 * process in `owner.json`, and later runs on the machine remove the folders whose process is gone.
 * Folders of live runs (other jobs share the staging directory) and of other machines (a shared
 * disk) are left alone.
 */
const OWNER_FILE = 'owner.json';

/** Run ids of `run` (20261121T194051Z-914db8d4) and of `compact` (compact-...). */
const RUN_DIR = /^(?:compact-)?\d{8}T\d{6}Z-[0-9a-f]{8}$/;

/** A folder without its owner file (its run died right after creating it) is removed once this old. */
const UNOWNED_MAX_AGE_MS = 24 * 3_600_000;

/** The staging folder of run `runId` under the staging directory `root`. */
export function runStagingDir(root: string, runId: string): string {
  return join(root, runId);
}

/** What a run or a compaction does first: removes the folders of killed runs, then creates its own. Returns its path. */
export async function openRunStagingDir(root: string, runId: string, logger: Logger | undefined): Promise<string> {
  await sweepDeadRunStagingDirs(root, { logger });
  return createRunStagingDir(root, runId);
}

export async function createRunStagingDir(root: string, runId: string, me: ProcessIdentity = thisProcess()): Promise<string> {
  const dir = runStagingDir(root, runId);
  await makeStagingDir(dir);
  await writeFile(
    join(dir, OWNER_FILE),
    JSON.stringify({ host: me.host, pid: me.pid, boot_id: me.bootId, started_at: new Date().toISOString() }),
  );
  return dir;
}

/** A staging directory that can never hold a folder for a run: a file write that fails for a reason the user must fix (exit 2). */
export class StagingDirUnusableError extends FileWriteError {
  override name = 'StagingDirUnusableError';
  override readonly exitCode: ExitCode = ExitCode.badInput;
}

/** Codes mkdir answers where no folder can ever be made (see makeDirs); others (ENOSPC ...) are transient. */
const UNUSABLE = new Set(['ENOTDIR', 'EEXIST', 'EACCES', 'EPERM', 'EROFS', 'ENOENT']);

/** Creates a staging folder; one that can never be made is the user's to fix (exit 2), a full disk is transient (exit 1). */
export async function makeStagingDir(dir: string): Promise<void> {
  try {
    await makeDirs(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
    const details = `${dir}: ${code} (${(err as Error).message})`;
    if (UNUSABLE.has(code)) {
      throw new StagingDirUnusableError(`The staging directory cannot hold the run's files`, {
        details,
        hint: 'Set staging_dir (INSIGHT_EXPORT_STAGING_DIR, --staging-dir) to a folder on a writable local disk.',
        cause: err,
      });
    }
    throw new FileWriteError(`The staging folder could not be created`, {
      details,
      hint: code === 'ENOSPC' ? 'The disk is full.' : undefined,
      cause: err,
    });
  }
}

export interface SweepOptions {
  logger?: Logger | undefined;
  /** For tests: this process, the liveness check and the clock. */
  identity?: ProcessIdentity;
  isAlive?: (pid: number) => boolean;
  now?: () => number;
}

/** Removes the staging folders of runs that died on this machine; returns their names. Never throws. */
export async function sweepDeadRunStagingDirs(root: string, opts: SweepOptions = {}): Promise<string[]> {
  const me = opts.identity ?? thisProcess();
  const isAlive = opts.isAlive ?? pidAlive;
  const now = opts.now ?? Date.now;
  let names: string[];
  try {
    names = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && RUN_DIR.test(e.name)).map((e) => e.name);
  } catch {
    return []; // no staging directory yet
  }
  const removed: string[] = [];
  for (const name of names) {
    const dir = join(root, name);
    try {
      if (!(await ownerIsGone(dir, me, isAlive, now))) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(name);
    } catch (err) {
      opts.logger?.debug({ dir, err: (err as Error).message }, 'staging folder of an earlier run not removed');
    }
  }
  if (removed.length > 0) opts.logger?.warn({ staging_dir: root, runs: removed }, 'removed the staging folders of runs that were killed');
  return removed;
}

async function ownerIsGone(dir: string, me: ProcessIdentity, isAlive: (pid: number) => boolean, now: () => number): Promise<boolean> {
  let owner: { host?: unknown; pid?: unknown; boot_id?: unknown } | null;
  try {
    owner = JSON.parse(await readFile(join(dir, OWNER_FILE), 'utf8')) as { host?: unknown; pid?: unknown; boot_id?: unknown } | null;
  } catch {
    owner = null; // missing, or cut short by the crash
  }
  if (owner === null || typeof owner !== 'object' || typeof owner.host !== 'string' || typeof owner.pid !== 'number') {
    return now() - (await stat(dir)).mtimeMs > UNOWNED_MAX_AGE_MS;
  }
  const bootId = typeof owner.boot_id === 'string' ? owner.boot_id : null;
  return isDeadHere({ host: owner.host, pid: owner.pid, bootId }, me, isAlive);
}
