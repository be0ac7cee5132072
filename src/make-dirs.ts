import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * `mkdir -p` that always ends: each missing folder is created on its own, from the nearest one
 * that exists, and the first refusal is thrown (its errno code kept). Node's own
 * `mkdir(dir, { recursive: true })` loops forever, busy, on file systems whose mkdir answers
 * ENOENT under an existing folder (procfs and some FUSE mounts).
 *
 * A folder another process creates meanwhile (EEXIST on a folder) is no error. A file on the path
 * is ENOTDIR; a folder that mkdir keeps refusing is its code (ENOENT, EACCES, EROFS, ENOSPC ...).
 */
export async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    const st = await stat(p).catch((err: NodeJS.ErrnoException) => err);
    if (!(st instanceof Error)) {
      if (!st.isDirectory()) throw errnoError('ENOTDIR', p, `${p} is not a folder`);
      break;
    }
    if (st.code !== 'ENOENT' || path.dirname(p) === p) throw st;
    missing.push(p);
  }
  for (const d of missing.reverse()) {
    try {
      await mkdir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        const st = await stat(d).catch(() => null);
        if (st?.isDirectory()) continue;
        throw errnoError('ENOTDIR', d, `${d} is not a folder`);
      }
      throw err;
    }
  }
}

function errnoError(code: string, file: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code, path: file });
}
