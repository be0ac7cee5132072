/**
 * A LocalStore's per-key lock: a file under `<root>/.insight-export-tmp/locks/` created exclusively
 * (written aside as a draft, then linked), naming its holder, broken when stale or when its holder
 * is a process of this machine that has exited.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidAlive, thisProcess } from '../process-identity.js';
import { isErrno } from './errno.js';
import { StoreError } from './errors.js';

/** A lock draft (`locks/<sha1>.lock.<pid>-<hex>`): the sweep of abandoned temp files removes old ones. */
export const LOCK_DRAFT = /^[0-9a-f]{40}\.lock\.\d+-[0-9a-f]+$/;

export interface LockLimits {
  /** How long a write waits for another writer's lock. */
  timeoutMs: number;
  /** A lock file older than this was left by a crashed process and is removed. */
  staleMs: number;
}

/**
 * Exclusive section for one key, across processes: a lock file created with O_EXCL. A lock older
 * than limits.staleMs is broken (its holder died: the sections it guards last milliseconds), and so
 * is one whose holder is a process of this machine that no longer exists (a killed run), at once.
 */
export async function withKeyLock<T>(lockDir: string, key: string, limits: LockLimits, fn: () => Promise<T>): Promise<T> {
  const lockFile = path.join(lockDir, `${createHash('sha1').update(key).digest('hex')}.lock`);
  const deadline = Date.now() + limits.timeoutMs;
  let wait = 1;
  for (;;) {
    // Written aside then linked: a lock file never exists without its holder's pid (a process
    // killed between creating and writing it would leave an anonymous lock).
    const draft = `${lockFile}.${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await writeFile(draft, `${process.pid}\n${LOCK_OWNER}\n`, { flag: 'wx' });
      await link(draft, lockFile);
      break;
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
    } finally {
      await unlink(draft).catch(() => undefined);
    }
    const st = await stat(lockFile).catch(() => null);
    if (st && (Date.now() - st.mtimeMs > limits.staleMs || (await lockHolderIsGone(lockFile)))) {
      await unlink(lockFile).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw new StoreError(`Timed out waiting for the lock on ${key}`, {
        details: `${lockFile} held for more than ${limits.timeoutMs} ms`,
        hint: 'Another process writes the same key; if none runs, delete the lock file.',
      });
    }
    await sleep(wait);
    wait = Math.min(wait * 2, 50);
  }
  try {
    return await fn();
  } finally {
    await unlink(lockFile).catch(() => undefined);
  }
}

/**
 * Host, boot and pid namespace of this process: a lock's pid is only checked by a process of the
 * same. null where they cannot be read (not Linux): locks of crashed processes are then broken when stale only.
 */
const LOCK_OWNER = ((me) => (me.bootId === null ? null : `${me.host} ${me.bootId}`))(thisProcess());

/** True when the lock file names a process of this machine (same boot and pid namespace) that has exited. */
async function lockHolderIsGone(lockFile: string): Promise<boolean> {
  if (LOCK_OWNER === null) return false;
  const text = await readFile(lockFile, 'utf8').catch(() => '');
  const [pidLine, owner] = text.split('\n');
  const pid = Number(pidLine);
  return owner === LOCK_OWNER && Number.isSafeInteger(pid) && pid > 0 && !pidAlive(pid);
}
