/** A LocalStore removes the temp files and lock drafts that killed writers left in its internal folder. */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LOCAL_INTERNAL_DIR } from '../../src/store/keys.js';
import { LocalStore } from '../../src/store/local.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('local-store-sweep-');
const TWO_DAYS_AGO = new Date(Date.now() - 2 * 24 * 3_600_000);

/** A fresh destination folder for one test. */
async function destination(): Promise<string> {
  const root = path.join(tmp.dir, randomBytes(4).toString('hex'));
  await mkdir(path.join(root, LOCAL_INTERNAL_DIR, 'locks'), { recursive: true });
  return root;
}

/** Writes a file in the store's internal folder, last modified at `mtime` (default now); returns its path. */
async function plant(root: string, name: string, mtime?: Date): Promise<string> {
  const file = path.join(root, LOCAL_INTERNAL_DIR, name);
  await writeFile(file, 'left by a killed writer');
  if (mtime) await utimes(file, mtime, mtime);
  return file;
}

const tempName = (pid: number) => `${pid}-${randomBytes(8).toString('hex')}.tmp`;
const draftName = (pid: number) => `locks/${'ab'.repeat(20)}.lock.${pid}-${randomBytes(4).toString('hex')}`;

async function internalFiles(root: string): Promise<string[]> {
  const top = await readdir(path.join(root, LOCAL_INTERNAL_DIR));
  const locks = (await readdir(path.join(root, LOCAL_INTERNAL_DIR, 'locks'))).map((n) => `locks/${n}`);
  return [...top.filter((n) => n !== 'locks'), ...locks].sort();
}

describe('LocalStore sweeps abandoned temp files', () => {
  it('the first write removes temp files and lock drafts older than the threshold, keeps fresh ones, and writes its object', async () => {
    const root = await destination();
    const oldTemp = tempName(4242);
    const oldDraft = draftName(4242);
    const freshTemp = tempName(4343);
    const freshDraft = draftName(4343);
    await plant(root, oldTemp, TWO_DAYS_AGO);
    await plant(root, oldDraft, TWO_DAYS_AGO);
    await plant(root, freshTemp);
    await plant(root, freshDraft);
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, cb) => (lines.push(String(chunk)), cb()) }));

    const store = new LocalStore(root, { logger });
    const { etag } = await store.put('a/b.json', '{"x":1}');

    expect(await internalFiles(root)).toEqual([freshDraft, freshTemp].sort());
    expect(await readFile(path.join(root, 'a', 'b.json'), 'utf8')).toBe('{"x":1}');
    expect((await store.get('a/b.json'))!.etag).toBe(etag);
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; files?: number }).filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.files).toBe(2);
  });

  it('the threshold is abandonedTempMs: a temp file a minute old goes when it is 30 s', async () => {
    const root = await destination();
    const minuteOld = tempName(4444);
    await plant(root, minuteOld, new Date(Date.now() - 60_000));

    await new LocalStore(root).put('kept-by-default.txt', 'x');
    expect(await internalFiles(root)).toEqual([minuteOld]);

    await new LocalStore(root, { abandonedTempMs: 30_000 }).put('swept-at-30s.txt', 'y');
    expect(await internalFiles(root)).toEqual([]);
  });

  it('sweeps once per instance: a temp file that turns old after the first write waits for the next instance', async () => {
    const root = await destination();
    const store = new LocalStore(root);
    await store.put('first.txt', '1');
    const laterTemp = tempName(4545);
    await plant(root, laterTemp, TWO_DAYS_AGO);

    await store.put('second.txt', '2');
    await store.putFile('third.txt', path.join(root, 'second.txt'));
    expect(await internalFiles(root)).toEqual([laterTemp]);

    await new LocalStore(root).put('fourth.txt', '4');
    expect(await internalFiles(root)).toEqual([]);
    expect(await readFile(path.join(root, 'third.txt'), 'utf8')).toBe('2');
  });

  it('concurrent first writes all succeed, and an old entry that is not a plain file is left alone', async () => {
    const root = await destination();
    const oldTemp = tempName(4646);
    await plant(root, oldTemp, TWO_DAYS_AGO);
    const folder = path.join(root, LOCAL_INTERNAL_DIR, 'not-a-file.tmp');
    await mkdir(folder);
    await utimes(folder, TWO_DAYS_AGO, TWO_DAYS_AGO);

    const store = new LocalStore(root);
    const keys = Array.from({ length: 8 }, (_, i) => `k/${i}.txt`);
    await Promise.all(keys.map((k) => store.put(k, k)));

    expect(await internalFiles(root)).toEqual(['not-a-file.tmp']);
    for (const k of keys) expect((await store.get(k))!.body.toString()).toBe(k);
  });
});
