/** What a failed file system call's error code says (ENOENT, EEXIST ...). */

export function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}

/** What `op` gives, or null when the path it reads is absent (ENOENT, ENOTDIR, and the codes in `also`); else throws `fail(err)`. */
export async function unlessAbsent<T>(op: Promise<T>, fail: (err: unknown) => Error, also: readonly string[] = []): Promise<T | null> {
  try {
    return await op;
  } catch (err) {
    if (['ENOENT', 'ENOTDIR', ...also].some((code) => isErrno(err, code))) return null;
    throw fail(err);
  }
}
