/**
 * A LocalStore's temp files (`<root>/.insight-export-tmp/<pid>-<hex>.tmp`) and lock drafts left by
 * killed writers, removed by age (not pid: the folder may be shared by several machines).
 */
import { lstat, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import type { Logger } from '../log.js';
import { isErrno } from './errno.js';
import { LOCK_DRAFT } from './local-lock.js';

/** Temp files of LocalStore (`<pid>-<hex>.tmp`). */
const TEMP_FILE = /\.tmp$/;

/**
 * Removes temp files and lock drafts older than abandonedTempMs. Never throws: a file that is
 * gone meanwhile (another process swept it) or cannot be removed is left to a later run.
 */
export async function sweepAbandonedTemps(tmpDir: string, abandonedTempMs: number, log: Logger): Promise<void> {
  const lockDir = path.join(tmpDir, 'locks');
  const candidates = [
    ...(await namesIn(tmpDir)).filter((n) => TEMP_FILE.test(n)).map((n) => path.join(tmpDir, n)),
    ...(await namesIn(lockDir)).filter((n) => LOCK_DRAFT.test(n)).map((n) => path.join(lockDir, n)),
  ];
  const cutoff = Date.now() - abandonedTempMs;
  const limit = pLimit(8);
  const removed = await Promise.all(
    candidates.map((file) =>
      limit(async () => {
        try {
          const st = await lstat(file);
          if (!st.isFile() || st.mtimeMs >= cutoff) return false;
          await unlink(file);
          return true;
        } catch (err) {
          if (!isErrno(err, 'ENOENT')) log.debug({ file, code: (err as NodeJS.ErrnoException)?.code }, 'abandoned temp file not removed');
          return false;
        }
      }),
    ),
  );
  const count = removed.filter(Boolean).length;
  if (count > 0) log.warn({ folder: tmpDir, files: count }, 'removed temp files of killed writers');
}

/** Entry names of a folder; none when it cannot be read. */
async function namesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}
