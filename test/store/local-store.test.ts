/** LocalStore guarantees that only a local directory needs: atomic replace, cross-process locks, folders. */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PreconditionFailedError, StoreError } from '../../src/store/errors.js';
import { LOCAL_INTERNAL_DIR } from '../../src/store/keys.js';
import { LocalStore } from '../../src/store/local.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

describe('LocalStore', () => {
  let dir: string;
  let store: LocalStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'local-store-'));
    store = new LocalStore(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stores keys as files under the root (a relative root is resolved against cwd)', async () => {
    await store.put('a/b/c.json', '{"x":1}');
    expect(await readFile(path.join(dir, 'a', 'b', 'c.json'), 'utf8')).toBe('{"x":1}');
    const rel = new LocalStore(path.relative(process.cwd(), dir));
    expect(rel.location).toBe(dir);
    expect((await rel.get('a/b/c.json'))!.body.toString()).toBe('{"x":1}');
  });

  it('a reader never sees a partly written object while it is replaced', async () => {
    const versions = [randomBytes(2 * 1024 * 1024), randomBytes(2 * 1024 * 1024)];
    const hashes = new Set(versions.map((v) => md5(v)));
    await store.put('big.bin', versions[0]!);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 20; i++) await store.put('big.bin', versions[i % 2]!);
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const got = await readFile(path.join(dir, 'big.bin'));
      expect(hashes.has(md5(got))).toBe(true);
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
  });

  it('leaves no temp or lock files behind, and list never shows its internal folder', async () => {
    await store.put('x/1.json', '1');
    await store.put('x/1.json', '2', { ifMatch: md5('1') });
    await expect(store.put('x/1.json', '3', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(store.put('x/1.json', '3', { ifMatch: md5('1') })).rejects.toBeInstanceOf(PreconditionFailedError);
    const src = path.join(dir, 'src.bin');
    await writeFile(src, 'file');
    await store.putFile('x/2.bin', src);
    const internal = path.join(dir, LOCAL_INTERNAL_DIR);
    expect((await readdir(internal)).filter((f) => f !== 'locks')).toEqual([]);
    expect(await readdir(path.join(internal, 'locks'))).toEqual([]);
    const keys: string[] = [];
    for await (const o of store.list('')) keys.push(o.key);
    expect(keys).toEqual(['src.bin', 'x/1.json', 'x/2.bin']);
  });

  it('putFile of a missing local file is a StoreError and writes nothing', async () => {
    const err = await store.putFile('x.bin', path.join(dir, 'nope.bin')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).message).toContain('nope.bin');
    expect(await store.head('x.bin')).toBeNull();
  });

  it('a lock left by a crashed writer is broken once stale', async () => {
    const quick = new LocalStore(dir, { staleLockMs: 200, lockTimeoutMs: 5_000 });
    await quick.put('k.json', '1');
    const locks = path.join(dir, LOCAL_INTERNAL_DIR, 'locks');
    const lockFile = path.join(locks, `${createHash('sha1').update('k.json').digest('hex')}.lock`);
    await writeFile(lockFile, '999999\n');
    const old = new Date(Date.now() - 10_000);
    await utimes(lockFile, old, old);
    await quick.put('k.json', '2', { ifMatch: md5('1') });
    expect((await quick.get('k.json'))!.body.toString()).toBe('2');
  });

  it('a live lock makes a writer wait, and time out with a StoreError', async () => {
    const impatient = new LocalStore(dir, { lockTimeoutMs: 150, staleLockMs: 60_000 });
    const locks = path.join(dir, LOCAL_INTERNAL_DIR, 'locks');
    await mkdir(locks, { recursive: true });
    await writeFile(path.join(locks, `${createHash('sha1').update('held.json').digest('hex')}.lock`), `${process.pid}\n`);
    const t0 = Date.now();
    await expect(impatient.put('held.json', 'x')).rejects.toThrow(/Timed out waiting for the lock/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(await impatient.head('held.json')).toBeNull();
  });

  it('an object name that is also a folder name is a StoreError (S3 allows it, a directory cannot)', async () => {
    await store.put('a', 'file');
    await expect(store.put('a/b', 'x')).rejects.toBeInstanceOf(StoreError);
    await store.put('c/d', 'x');
    await expect(store.put('c', 'file')).rejects.toBeInstanceOf(StoreError);
    expect((await store.get('a'))!.body.toString()).toBe('file');
    expect(await store.get('c')).toBeNull();
  });

  it('delete removes folders it leaves empty, but not the root', async () => {
    await store.put('p/q/r.json', '1');
    await store.put('p/s.json', '1');
    await store.delete('p/q/r.json');
    await expect(stat(path.join(dir, 'p', 'q'))).rejects.toMatchObject({ code: 'ENOENT' });
    await store.delete('p/s.json');
    await expect(stat(path.join(dir, 'p'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await stat(dir)).isDirectory()).toBe(true);
  });

  it('an ETag reflects a change made behind the store (the cache is checked against the file)', async () => {
    await store.put('e.json', 'one');
    expect((await store.head('e.json'))!.etag).toBe(md5('one'));
    await writeFile(path.join(dir, 'e.json'), 'two, longer');
    expect((await store.head('e.json'))!.etag).toBe(md5('two, longer'));
    await expect(store.put('e.json', 'three', { ifMatch: md5('one') })).rejects.toBeInstanceOf(PreconditionFailedError);
  });

  it('compare-and-swap holds across processes: concurrent ifMatch increments lose nothing', async () => {
    await store.put('counter.json', '0');
    const script = path.join(dir, 'incr.mts');
    await writeFile(
      script,
      `import { LocalStore } from ${JSON.stringify(path.join(REPO, 'src/store/local.ts'))};
       import { PreconditionFailedError } from ${JSON.stringify(path.join(REPO, 'src/store/errors.ts'))};
       import { existsSync, writeFileSync } from 'node:fs';
       const store = new LocalStore(process.argv[2]);
       // Barrier: start together, so the writers really overlap.
       writeFileSync(process.argv[2] + '/ready-' + process.pid, '');
       while (!existsSync(process.argv[2] + '/go')) await new Promise((r) => setTimeout(r, 5));
       let done = 0, conflicts = 0;
       while (done < Number(process.argv[3])) {
         const cur = await store.get('counter.json');
         try { await store.put('counter.json', String(Number(cur.body.toString()) + 1), { ifMatch: cur.etag }); done++; }
         catch (e) { if (!(e instanceof PreconditionFailedError)) throw e; conflicts++; }
       }
       console.log(conflicts);`,
    );
    const perProcess = 40;
    const processes = 3;
    const runOne = () =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ['--import', 'tsx', script, dir, String(perProcess)], { cwd: REPO }, (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
        ),
      );
    const runs = Array.from({ length: processes }, runOne);
    while ((await readdir(dir)).filter((f) => f.startsWith('ready-')).length < processes) await new Promise((r) => setTimeout(r, 10));
    await writeFile(path.join(dir, 'go'), '');
    const conflicts = (await Promise.all(runs)).map(Number);
    expect(Number((await store.get('counter.json'))!.body.toString())).toBe(processes * perProcess);
    // The writers did collide (otherwise this test would prove nothing) and retried.
    expect(conflicts.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 60_000);
});
