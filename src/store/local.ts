import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pLimit from 'p-limit';
import { silentLogger, type Logger } from '../log.js';
import { makeDirs } from '../make-dirs.js';
import { checkConditions } from './conditional-write.js';
import { isErrno, unlessAbsent } from './errno.js';
import { ContentChecksumError, DestinationUnusableError, PreconditionFailedError, StoreError, uploadFileMissing } from './errors.js';
import { compareKeys, LOCAL_INTERNAL_DIR, validateKey, validatePrefix } from './keys.js';
import { EtagCache, md5 } from './local-etags.js';
import { withKeyLock } from './local-lock.js';
import { sweepAbandonedTemps } from './local-temp-files.js';
import type { ListOptions, ObjectInfo, ObjectStore, PutOptions } from './store.js';

export interface LocalStoreOptions {
  /** How long a write waits for another writer's lock on the same key (default 30 s). */
  lockTimeoutMs?: number;
  /** A lock file older than this is taken to be left by a crashed process and removed (default 60 s). */
  staleLockMs?: number;
  /**
   * A temp file or lock draft not modified for this long was left by a killed process and is
   * removed (default 24 h). Keep it far above lockTimeoutMs: a finished temp file waits for its lock.
   */
  abandonedTempMs?: number;
  /** Gets one warning line (folder and count) when abandoned temp files were removed. */
  logger?: Logger | undefined;
}

/**
 * What mkdir answers where no folder can ever be made: a file on the path, no permission, a
 * read-only file system, one that refuses folders (ENOENT under an existing folder: procfs, sysfs).
 * Other codes (ENOSPC, EIO ...) may pass: they fail the run as transient.
 */
const UNUSABLE_DIR_CODES = new Set(['ENOTDIR', 'EEXIST', 'EACCES', 'EPERM', 'EROFS', 'ENOENT']);

/**
 * A local directory as an object store. Keys map to files below `rootDir`.
 *
 * Guarantees:
 * - Every write goes to a temp file in `<root>/.insight-export-tmp/`, is fsynced, then renamed
 *   into place (and the folder fsynced): readers see the old file or the whole new one.
 * - ETag = hex MD5 of the content (what S3 reports for a single-part upload). Files this process
 *   wrote are not read again for it; others are hashed on head/list (list reads every file once).
 * - `ifNoneMatch: '*'` is a `link()` of the finished temp file to the key: the kernel refuses it
 *   when the key exists, so exactly one of several concurrent creators wins, across processes.
 * - `ifMatch` and every other write or delete of a key take a per-key lock file (exclusive
 *   create) around "compare ETag, rename": a compare-and-swap against all writers that use
 *   LocalStore on the same directory, in this process or another. A lock older than
 *   `staleLockMs` (its holder crashed) is broken. Writers that bypass LocalStore are not covered.
 * - A local directory cannot hold both a file "a" and a file "a/b"; S3 can. Such a put fails
 *   with a StoreError.
 * - A process killed mid-write leaves its temp file behind: the first write of each instance removes
 *   temp files and lock drafts not modified for `abandonedTempMs` (24 h; by age, not pid, as the
 *   folder may be shared by several machines). A file being written keeps a fresh mtime.
 */
export class LocalStore implements ObjectStore {
  readonly location: string;
  readonly rootDir: string;
  private readonly tmpDir: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private readonly abandonedTempMs: number;
  private readonly log: Logger;
  /** The sweep of abandoned temp files, started by the first newTempPath of this instance. */
  private sweep: Promise<void> | undefined;
  /** ETags of files this process wrote or read (src/store/local-etags.ts). */
  private readonly etags = new EtagCache();

  constructor(rootDir: string, opts: LocalStoreOptions = {}) {
    this.rootDir = path.resolve(rootDir);
    this.location = this.rootDir;
    this.tmpDir = path.join(this.rootDir, LOCAL_INTERNAL_DIR);
    this.lockTimeoutMs = opts.lockTimeoutMs ?? 30_000;
    this.staleLockMs = opts.staleLockMs ?? 60_000;
    this.abandonedTempMs = opts.abandonedTempMs ?? 24 * 3_600_000;
    this.log = opts.logger ?? silentLogger;
  }

  async putFile(key: string, localPath: string, opts: PutOptions = {}): Promise<{ etag: string }> {
    validateKey(key);
    const tmp = await this.newTempPath();
    const hash = createHash('md5');
    try {
      await pipeline(
        createReadStream(localPath),
        new Transform({
          transform(chunk: Buffer, _enc, cb) {
            hash.update(chunk);
            cb(null, chunk);
          },
        }),
        createWriteStream(tmp, { flags: 'wx' }),
      );
      await fsyncFile(tmp);
    } catch (err) {
      await rm(tmp, { force: true });
      if (isErrno(err, 'ENOENT') && !(await exists(localPath))) {
        throw uploadFileMissing(localPath, key, err);
      }
      throw this.ioError('write', key, err);
    }
    const md5 = hash.digest('hex');
    if (opts.digests && opts.digests.md5 !== md5) {
      await rm(tmp, { force: true });
      throw new ContentChecksumError(this.location, key, { metaMessages: [`MD5 written ${opts.digests.md5}, copied ${md5}`] });
    }
    return this.commit(key, tmp, md5, opts);
  }

  async put(key: string, body: Buffer | string, opts: PutOptions = {}): Promise<{ etag: string }> {
    validateKey(key);
    const data = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const tmp = await this.newTempPath();
    try {
      const fh = await open(tmp, 'wx');
      try {
        await fh.writeFile(data);
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      await rm(tmp, { force: true });
      throw this.ioError('write', key, err);
    }
    return this.commit(key, tmp, md5(data), opts);
  }

  async get(key: string): Promise<{ body: Buffer; etag: string } | null> {
    validateKey(key);
    const body = await unlessAbsent(readFile(this.fileOf(key)), (err) => this.ioError('read', key, err), ['EISDIR']);
    return body === null ? null : { body, etag: md5(body) };
  }

  async getStream(key: string): Promise<Readable | null> {
    validateKey(key);
    try {
      // Open first so that an absent key is null rather than a stream that errors later.
      const fh = await open(this.fileOf(key), 'r');
      if ((await fh.stat()).isDirectory()) {
        await fh.close();
        return null;
      }
      return fh.createReadStream();
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return null;
      throw this.ioError('read', key, err);
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    validateKey(key);
    const file = this.fileOf(key);
    const st = await unlessAbsent(stat(file), (err) => this.ioError('stat', key, err));
    if (!st?.isFile()) return null;
    const etag = await this.etags.etagOf(file, st);
    if (etag === null) return null;
    return { key, size: st.size, etag, lastModified: st.mtime };
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    validatePrefix(prefix);
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash < 0 ? '' : prefix.slice(0, slash);
    const keys: string[] = [];
    await this.walk(dirKey, keys, prefix);
    const matching = keys.filter((k) => k.startsWith(prefix)).sort(compareKeys);
    for (const key of matching) {
      const info = opts.etags === false ? await this.statOf(key) : await this.head(key);
      if (info) yield info; // deleted meanwhile: skipped, as S3 would after the listing
    }
  }

  /** A file's size and time, without reading it (an empty ETag). */
  private async statOf(key: string): Promise<ObjectInfo | null> {
    const st = await unlessAbsent(stat(this.fileOf(key)), (err) => this.ioError('stat', key, err));
    return st?.isFile() ? { key, size: st.size, etag: '', lastModified: st.mtime } : null;
  }

  async delete(key: string): Promise<void> {
    validateKey(key);
    await this.withLock(key, async () => {
      try {
        await unlink(this.fileOf(key));
      } catch (err) {
        if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return;
        if (isErrno(err, 'EISDIR') || isErrno(err, 'EPERM')) return; // a "folder", not an object
        throw this.ioError('delete', key, err);
      }
      this.etags.delete(this.fileOf(key));
    });
    await this.pruneEmptyDirs(path.dirname(this.fileOf(key)));
  }

  async deleteMany(keys: string[]): Promise<void> {
    for (const k of keys) validateKey(k);
    const limit = pLimit(8);
    await Promise.all(keys.map((k) => limit(() => this.delete(k))));
  }

  async close(): Promise<void> {
    this.etags.clear();
  }

  // ---------------------------------------------------------------------------------------------

  private fileOf(key: string): string {
    return path.join(this.rootDir, ...key.split('/'));
  }

  /** Creates a folder of the store's own (temp files, locks); a destination that cannot hold one is the user's to fix. */
  private async makeOwnDir(dir: string): Promise<void> {
    try {
      await makeDirs(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== undefined && UNUSABLE_DIR_CODES.has(code)) {
        const blocker = code === 'ENOTDIR' || code === 'EEXIST' ? await fileOnThePath(this.rootDir) : null;
        throw new DestinationUnusableError(`The destination ${this.rootDir} cannot be used as a folder`, {
          details: blocker ? `${blocker} is a file, not a folder` : `${dir}: ${code} (${(err as Error).message})`,
          hint: blocker
            ? 'Give a destination whose parent folders are folders (or s3://bucket/prefix).'
            : code === 'ENOENT'
              ? 'The file system there refuses to create folders (e.g. /proc, /sys): give a folder on a writable disk.'
              : 'Give a destination this user can create folders and files in.',
          cause: err,
        });
      }
      throw this.ioError('create folder', path.relative(this.rootDir, dir) || '.', err);
    }
  }

  private async newTempPath(): Promise<string> {
    await this.makeOwnDir(this.tmpDir);
    await (this.sweep ??= sweepAbandonedTemps(this.tmpDir, this.abandonedTempMs, this.log).catch(() => undefined));
    return path.join(this.tmpDir, `${process.pid}-${randomBytes(8).toString('hex')}.tmp`);
  }

  /** Moves a finished temp file to its key, honouring the write conditions. */
  private async commit(key: string, tmp: string, etag: string, opts: PutOptions): Promise<{ etag: string }> {
    const file = this.fileOf(key);
    try {
      await this.withLock(key, async () => {
        if (opts.ifMatch !== undefined) checkConditions(this.location, key, await this.etags.currentEtag(file), opts);
        await this.withParentDir(key, async () => {
          if (opts.ifNoneMatch === '*') {
            try {
              await link(tmp, file);
            } catch (err) {
              if (isErrno(err, 'EEXIST')) throw new PreconditionFailedError(this.location, key, opts);
              throw err;
            }
            await unlink(tmp);
          } else {
            await rename(tmp, file);
          }
        });
        await fsyncDir(path.dirname(file));
        const st = await stat(file);
        this.etags.set(file, st, etag);
      });
    } catch (err) {
      await rm(tmp, { force: true });
      if (err instanceof StoreError) throw err;
      throw this.ioError('write', key, err);
    }
    return { etag };
  }

  /** Runs fn after creating the key's parent folders; retries once if a delete pruned them. */
  private async withParentDir(key: string, fn: () => Promise<void>): Promise<void> {
    const dir = path.dirname(this.fileOf(key));
    for (let attempt = 0; ; attempt++) {
      try {
        await makeDirs(dir);
        await fn();
        return;
      } catch (err) {
        if (err instanceof StoreError) throw err;
        if (isErrno(err, 'ENOTDIR') || isErrno(err, 'EEXIST')) {
          throw new StoreError(`Cannot write ${key}: a file stands where a folder is needed`, {
            details: `${this.location}: a local directory cannot hold both "a" and "a/b"`,
            hint: 'Choose keys where no object name is also a folder name, or use an S3 destination.',
            cause: err,
          });
        }
        if (isErrno(err, 'EISDIR') || isErrno(err, 'ENOTEMPTY')) {
          throw new StoreError(`Cannot write ${key}: a folder of that name exists`, {
            details: `${this.location}: a local directory cannot hold both "a" and "a/b"`,
            cause: err,
          });
        }
        if (isErrno(err, 'ENOENT') && attempt < 3) continue;
        throw err;
      }
    }
  }

  /** Exclusive section for one key, across processes (src/store/local-lock.ts). */
  private async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const lockDir = path.join(this.tmpDir, 'locks');
    await this.makeOwnDir(lockDir);
    return withKeyLock(lockDir, key, { timeoutMs: this.lockTimeoutMs, staleMs: this.staleLockMs }, fn);
  }

  /** Every file under `dirKey`, skipping folders whose keys cannot start with `prefix` (default: none skipped). */
  private async walk(dirKey: string, out: string[], prefix = ''): Promise<void> {
    const dir = dirKey === '' ? this.rootDir : this.fileOf(dirKey);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return;
      throw this.ioError('list', dirKey, err);
    }
    for (const e of entries) {
      if (dirKey === '' && e.name === LOCAL_INTERNAL_DIR) continue;
      const key = dirKey === '' ? e.name : `${dirKey}/${e.name}`;
      if (e.isDirectory()) {
        if (`${key}/`.startsWith(prefix) || prefix.startsWith(`${key}/`)) await this.walk(key, out, prefix);
      } else if (e.isFile()) out.push(key);
    }
  }

  /** Removes folders left empty by a delete, up to (not including) the root: S3 has no folders. */
  private async pruneEmptyDirs(dir: string): Promise<void> {
    while (dir.startsWith(this.rootDir + path.sep) && dir !== this.rootDir) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty, already gone, or in use: leave it
      }
      dir = path.dirname(dir);
    }
  }

  private ioError(op: string, key: string, err: unknown): StoreError {
    const code = (err as NodeJS.ErrnoException)?.code;
    return new StoreError(`Local store ${op} failed for ${key}${code ? ` (${code})` : ''}`, {
      details: `${this.location}: ${(err as Error)?.message ?? String(err)}`,
      hint: code === 'ENOSPC' ? 'The disk is full.' : code === 'EACCES' ? 'Check the permissions of the destination directory.' : undefined,
      cause: err,
    });
  }
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

async function fsyncFile(file: string): Promise<void> {
  const fh = await open(file, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic.
  }
}

/** The nearest ancestor of `dir` (or itself) that exists and is not a folder, if any. */
async function fileOnThePath(dir: string): Promise<string | null> {
  for (let p = dir; ; p = path.dirname(p)) {
    const st = await stat(p).catch(() => null);
    if (st) return st.isDirectory() ? null : p;
    if (path.dirname(p) === p) return null;
  }
}
