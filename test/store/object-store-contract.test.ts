/**
 * One behaviour table, two stores: every ObjectStore promise holds for LocalStore and for
 * S3Store against the run's real radosgw.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidKeyError, PreconditionFailedError } from '../../src/store/errors.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectInfo, ObjectStore } from '../../src/store/store.js';
import { createTestBucket } from '../helpers/s3.js';

interface Backend {
  name: string;
  /** A fresh, empty store; the second one shares the first one's storage (another client/process view). */
  open(): Promise<{ store: ObjectStore; smallPages: ObjectStore; cleanup(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'LocalStore',
    async open() {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'store-contract-'));
      return {
        store: new LocalStore(dir),
        smallPages: new LocalStore(dir),
        cleanup: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'S3Store (radosgw)',
    async open() {
      const b = await createTestBucket('store-contract');
      return { store: b.store('exports/run'), smallPages: b.store('exports/run', { listPageSize: 3 }), cleanup: () => b.cleanup() };
    },
  },
];

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

async function collect(it: AsyncIterable<ObjectInfo>): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const o of it) out.push(o);
  return out;
}

describe.each(backends)('ObjectStore contract: $name', (backend) => {
  let store: ObjectStore;
  let smallPages: ObjectStore;
  let cleanup: () => Promise<void>;
  let tmp: string;

  beforeAll(async () => {
    ({ store, smallPages, cleanup } = await backend.open());
    tmp = await mkdtemp(path.join(os.tmpdir(), 'store-contract-files-'));
  });
  afterAll(async () => {
    await store?.close?.();
    await smallPages?.close?.();
    await cleanup?.();
    await rm(tmp, { recursive: true, force: true });
  });

  it('put then get returns the same bytes, and the ETag is the MD5 of the content', async () => {
    const body = randomBytes(3000);
    const { etag } = await store.put('a/put-get.bin', body);
    expect(etag).toBe(md5(body));
    const got = await store.get('a/put-get.bin');
    expect(got).not.toBeNull();
    expect(Buffer.compare(got!.body, body)).toBe(0);
    expect(got!.etag).toBe(etag);
  });

  it('put accepts a string body (UTF-8)', async () => {
    const s = 'état: ✓ 😀';
    await store.put('a/string.txt', s, { contentType: 'text/plain' });
    expect((await store.get('a/string.txt'))!.body.toString('utf8')).toBe(s);
  });

  it('head reports size, ETag and modification time', async () => {
    const body = Buffer.from('{"n":1}');
    const before = Date.now();
    const { etag } = await store.put('a/head.json', body);
    const info = await store.head('a/head.json');
    expect(info).toMatchObject({ key: 'a/head.json', size: body.length, etag });
    expect(info!.lastModified!.getTime()).toBeGreaterThan(before - 5_000);
  });

  it('get, getStream and head of an absent key return null', async () => {
    expect(await store.get('absent/x.json')).toBeNull();
    expect(await store.getStream('absent/x.json')).toBeNull();
    expect(await store.head('absent/x.json')).toBeNull();
  });

  it('getStream streams the object', async () => {
    const s = 'line\n'.repeat(10_000);
    await store.put('a/stream.ndjson', s);
    const stream = await store.getStream('a/stream.ndjson');
    expect(await text(stream!)).toBe(s);
  });

  it('putFile uploads a local file byte for byte and leaves the local file in place', async () => {
    const file = path.join(tmp, 'part.parquet');
    const body = randomBytes(256 * 1024 + 7);
    await writeFile(file, body);
    const { etag } = await store.putFile('files/part.parquet', file, { contentType: 'application/vnd.apache.parquet' });
    expect(etag).toBe(md5(body));
    const got = await store.get('files/part.parquet');
    expect(Buffer.compare(got!.body, body)).toBe(0);
    expect((await store.head('files/part.parquet'))!.etag).toBe(etag);
  });

  it('an empty object round-trips through put and putFile', async () => {
    const file = path.join(tmp, 'empty.ndjson');
    await writeFile(file, '');
    expect((await store.putFile('files/empty.ndjson', file)).etag).toBe(md5(''));
    expect((await store.put('a/empty.json', Buffer.alloc(0))).etag).toBe(md5(''));
    for (const k of ['files/empty.ndjson', 'a/empty.json']) {
      expect((await store.get(k))!.body.length).toBe(0);
      expect(await store.head(k)).toMatchObject({ size: 0, etag: md5('') });
    }
  });

  it('put replaces an existing object', async () => {
    await store.put('a/replace.txt', 'one');
    const { etag } = await store.put('a/replace.txt', 'two');
    const got = await store.get('a/replace.txt');
    expect(got!.body.toString()).toBe('two');
    expect(got!.etag).toBe(etag);
  });

  it('list returns every key under the prefix, recursively, in key order, and nothing else', async () => {
    const keys = ['l/b.txt', 'l/a/2.txt', 'l/a/10.txt', 'l/a-b.txt', 'l/c/d/e.txt', 'l/a/1.txt', 'l2/x.txt', 'lz.txt'];
    for (const k of keys) await store.put(k, k);
    const listed = await collect(store.list('l/'));
    const expected = keys.filter((k) => k.startsWith('l/')).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(listed.map((o) => o.key)).toEqual(expected);
    for (const o of listed) {
      expect(o.size).toBe(Buffer.byteLength(o.key));
      expect(o.etag).toBe(md5(o.key));
    }
    // A prefix that ends inside a name matches by string prefix, like S3.
    expect((await collect(store.list('l'))).map((o) => o.key)).toEqual([...expected, 'l2/x.txt', 'lz.txt']);
    expect((await collect(store.list('l/a/1'))).map((o) => o.key)).toEqual(['l/a/1.txt', 'l/a/10.txt']);
    expect(await collect(store.list('nothing-here/'))).toEqual([]);
  });

  it('list pages through more keys than one page holds', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `pages/k${String(i).padStart(2, '0')}`);
    await Promise.all(keys.map((k) => store.put(k, k)));
    expect((await collect(smallPages.list('pages/'))).map((o) => o.key)).toEqual(keys);
  });

  it('ifNoneMatch "*": the first create wins, the second fails with PreconditionFailedError and changes nothing', async () => {
    const first = await store.put('cond/create.json', 'first', { ifNoneMatch: '*' });
    expect(first.etag).toBe(md5('first'));
    const second = store.put('cond/create.json', 'second', { ifNoneMatch: '*' });
    await expect(second).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(second).rejects.toMatchObject({ key: 'cond/create.json' });
    expect((await store.get('cond/create.json'))!.body.toString()).toBe('first');
  });

  it('ifNoneMatch "*" with putFile', async () => {
    const file = path.join(tmp, 'marker.json');
    await writeFile(file, '{"done":true}');
    await store.putFile('cond/marker.json', file, { ifNoneMatch: '*' });
    await expect(store.putFile('cond/marker.json', file, { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
  });

  it('ifMatch: a stale ETag fails, the current ETag replaces, an absent key fails', async () => {
    const v1 = await store.put('cond/cas.json', 'v1');
    const v2 = await store.put('cond/cas.json', 'v2', { ifMatch: v1.etag });
    expect(v2.etag).toBe(md5('v2'));
    await expect(store.put('cond/cas.json', 'v3', { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect((await store.get('cond/cas.json'))!.body.toString()).toBe('v2');
    // Quoted ETags (as HTTP shows them) are the same tag.
    await store.put('cond/cas.json', 'v3', { ifMatch: `"${v2.etag}"` });
    expect((await store.get('cond/cas.json'))!.body.toString()).toBe('v3');
    await expect(store.put('cond/absent.json', 'x', { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(await store.head('cond/absent.json')).toBeNull();
  });

  it('ifNoneMatch "*": of several concurrent creators exactly one wins', async () => {
    const n = 8;
    const results = await Promise.allSettled(
      Array.from({ length: n }, (_, i) => store.put('cond/race.json', `writer-${i}`, { ifNoneMatch: '*' })),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(PreconditionFailedError);
    expect((await store.get('cond/race.json'))!.body.toString()).toBe(`writer-${won[0]}`);
  });

  it('ifMatch read-modify-write loops from concurrent writers lose no update', async () => {
    await store.put('cond/counter.json', '0');
    const increments = async (times: number) => {
      for (let done = 0; done < times;) {
        const cur = (await store.get('cond/counter.json'))!;
        try {
          await store.put('cond/counter.json', String(Number(cur.body.toString()) + 1), { ifMatch: cur.etag });
          done++;
        } catch (err) {
          if (!(err instanceof PreconditionFailedError)) throw err;
        }
      }
    };
    await Promise.all([increments(6), increments(6), increments(6)]);
    expect(Number((await store.get('cond/counter.json'))!.body.toString())).toBe(18);
  });

  it('delete removes an object; deleting an absent key is not an error', async () => {
    await store.put('del/one.txt', '1');
    await store.delete('del/one.txt');
    expect(await store.head('del/one.txt')).toBeNull();
    await expect(store.delete('del/one.txt')).resolves.toBeUndefined();
    expect(await collect(store.list('del/'))).toEqual([]);
  });

  it('deleteMany removes more keys than one DeleteObjects call takes (1000), absent keys included', async () => {
    const keys = Array.from({ length: 1005 }, (_, i) => `many/${String(i).padStart(4, '0')}.json`);
    const queue = [...keys];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let k = queue.pop(); k !== undefined; k = queue.pop()) await store.put(k, '{}');
      }),
    );
    await store.put('many-keep/x.json', '{}');
    expect((await collect(store.list('many/'))).length).toBe(keys.length);
    await store.deleteMany([...keys, 'many/absent.json']);
    expect(await collect(store.list('many/'))).toEqual([]);
    expect(await store.head('many-keep/x.json')).not.toBeNull();
  }, 120_000);

  it.each([
    ['an absolute key', '/etc/passwd'],
    ['a ".." segment', 'a/../../escape'],
    ['a backslash', 'a\\b.txt'],
    ['an empty segment', 'a//b.txt'],
    ['a trailing slash', 'a/b/'],
    ['a "." segment', './a.txt'],
    ['an empty key', ''],
    ['a control character', 'a\nb'],
  ])('rejects %s with InvalidKeyError (exit code 2) before touching storage', async (_what, key) => {
    for (const op of [
      () => store.put(key, 'x'),
      () => store.get(key),
      () => store.head(key),
      () => store.delete(key),
      () => store.deleteMany(['ok.txt', key]),
    ]) {
      const err = await op().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidKeyError);
      expect((err as InvalidKeyError).exitCode).toBe(2);
    }
    await expect(store.putFile(key, path.join(tmp, 'part.parquet'))).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(collect(store.list('../'))).rejects.toBeInstanceOf(InvalidKeyError);
  });
});
