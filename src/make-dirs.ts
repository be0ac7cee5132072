import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/** The two calls makeDirs makes (tests give ones that race). */
export interface FolderOps {
  mkdir: (dir: string) => Promise<unknown>;
  stat: (path: string) => Promise<{ isDirectory(): boolean }>;
}

/**
 * `mkdir -p` that always ends: each missing folder is created on its own, from the nearest one
 * that exists, and the first refusal is thrown (its errno code kept). Node's own
 * `mkdir(dir, { recursive: true })` loops forever, busy, on file systems whose mkdir answers
 * ENOENT under an existing folder (procfs and some FUSE mounts).
 *
 * A folder another process creates meanwhile (EEXIST on a folder) is no error, nor one it creates
 * and removes again. A file on the path is ENOTDIR; a folder that mkdir keeps refusing is its code
 * (ENOENT, EACCES, EROFS, ENOSPC ...).
 */
export async function makeDirs(dir: string, ops: FolderOps = { mkdir, stat }): Promise<void> {
  const missing: string[] = [];
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    const st = await ops.stat(p).catch((err: NodeJS.ErrnoException) => err);
    if (!(st instanceof Error)) {
      if (!st.isDirectory()) throw errnoError('ENOTDIR', p, `${p} is not a folder`);
      break;
    }
    if (st.code !== 'ENOENT' || path.dirname(p) === p) throw st;
    missing.push(p);
  }
  for (const d of missing.reverse()) await makeDir(d, ops);
}

/**
 * One folder. EEXIST then ENOENT: another process created the folder and removed it again (a
 * delete pruning the folders it emptied): create it again, a few times.
 */
async function makeDir(d: string, ops: FolderOps): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ops.mkdir(d);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = await ops.stat(d).catch((e: NodeJS.ErrnoException) => e);
      if (!(st instanceof Error)) {
        if (st.isDirectory()) return;
        throw errnoError('ENOTDIR', d, `${d} is not a folder`);
      }
      if (st.code !== 'ENOENT' || attempt >= 5) throw errnoError('ENOTDIR', d, `${d} is not a folder`);
    }
  }
}

function errnoError(code: string, file: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code, path: file });
}
