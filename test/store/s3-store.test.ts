/** S3Store against the run's real radosgw: multipart, prefixes, conditional paths, retries. */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreconditionFailedError } from '../../src/store/errors.js';
import type { S3Store } from '../../src/store/s3.js';
import { useTestBucket } from '../helpers/s3.js';

const MiB = 1024 * 1024;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

describe('S3Store on radosgw', () => {
  const bucket = useTestBucket('s3-store');
  let tmp: string;
  let big: Buffer;
  let bigFile: string;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 's3-store-'));
    big = randomBytes(20 * MiB + 12345);
    bigFile = path.join(tmp, 'big.parquet');
    await writeFile(bigFile, big);
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  async function unfinishedUploads(): Promise<number> {
    const out = await bucket.client.send(new ListMultipartUploadsCommand({ Bucket: bucket.bucket }));
    return out.Uploads?.length ?? 0;
  }

  it('putFile uploads a 20 MB file in parts; it reads back byte for byte with the ETag HeadObject reports', async () => {
    const store = bucket.store('big', { partSize: 5 * MiB, queueSize: 2 });
    const t0 = Date.now();
    const { etag } = await store.putFile('data/big.parquet', bigFile);
    const ms = Date.now() - t0;
    // A multipart ETag is "<md5 of the part md5s>-<parts>": 5 parts of 5 MiB.
    expect(etag).toMatch(/^[0-9a-f]{32}-5$/);
    const head = await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: 'big/data/big.parquet' }));
    expect(head.ETag).toBe(`"${etag}"`);
    expect(head.ContentLength).toBe(big.length);
    const got = await bucket.client.send(new GetObjectCommand({ Bucket: bucket.bucket, Key: 'big/data/big.parquet' }));
    expect(sha256(await got.Body!.transformToByteArray())).toBe(sha256(big));
    expect(await unfinishedUploads()).toBe(0);
    console.log(`[s3-store] 20 MiB multipart putFile: ${ms} ms (${(big.length / MiB / (ms / 1000)).toFixed(0)} MiB/s)`);
  });

  it('a multipart upload whose part fails is aborted: no object, no unfinished upload', async () => {
    // No retry budget: the one failed upload itself is what is checked.
    const store = bucket.store('big', { partSize: 5 * MiB, queueSize: 1, maxAttempts: 1, retryBudgetMs: 0 });
    let parts = 0;
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UploadPartCommand' && ++parts === 3)
          throw Object.assign(new Error('injected part failure'), { name: 'InternalError', $metadata: { httpStatusCode: 500 } });
        return next(args);
      },
      { step: 'initialize', name: 'failThirdPart' },
    );
    await expect(store.putFile('data/failed.parquet', bigFile)).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    expect(parts).toBeGreaterThanOrEqual(3);
    expect(await store.head('data/failed.parquet')).toBeNull();
    expect(await unfinishedUploads()).toBe(0);
  });

  it('keys live under the store prefix; list returns them relative to it; other prefixes do not see them', async () => {
    const a = bucket.store('tenant-a/exports');
    const b = bucket.store('/tenant-a/exports-b/');
    await a.put('x/1.json', '1');
    await b.put('x/1.json', 'b');
    const raw = await bucket.client.send(new GetObjectCommand({ Bucket: bucket.bucket, Key: 'tenant-a/exports/x/1.json' }));
    expect(await raw.Body!.transformToString()).toBe('1');
    const listed: string[] = [];
    for await (const o of a.list('')) listed.push(o.key);
    expect(listed).toEqual(['x/1.json']);
    expect(a.location).toBe(`s3://${bucket.bucket}/tenant-a/exports`);
    expect(b.location).toBe(`s3://${bucket.bucket}/tenant-a/exports-b`);
  });

  it('a conditional putFile larger than the in-memory limit streams one PUT and keeps the condition', async () => {
    const store = bucket.store('cond', { conditionalBufferMaxBytes: 1024 });
    const file = path.join(tmp, 'medium.bin');
    const body = randomBytes(3 * MiB);
    await writeFile(file, body);
    const { etag } = await store.putFile('medium.bin', file, { ifNoneMatch: '*' });
    expect(etag).toBe(md5(body));
    await expect(store.putFile('medium.bin', file, { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(store.putFile('medium.bin', file, { ifMatch: 'ffffffffffffffffffffffffffffffff' })).rejects.toBeInstanceOf(
      PreconditionFailedError,
    );
    await expect(store.putFile('medium.bin', file, { ifMatch: etag })).resolves.toEqual({ etag });
  });

  it('a conditional putFile too big for one PUT goes multipart, checked before the upload', async () => {
    const store = bucket.store('cond-multipart', { conditionalBufferMaxBytes: 1024, singlePutMaxBytes: 1024, partSize: 5 * MiB });
    const file = path.join(tmp, 'six.bin');
    const body = randomBytes(6 * MiB);
    await writeFile(file, body);
    const { etag } = await store.putFile('six.bin', file, { ifNoneMatch: '*' });
    expect(etag).toMatch(/-2$/);
    await expect(store.putFile('six.bin', file, { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(store.putFile('six.bin', file, { ifMatch: md5(body) })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(store.putFile('six.bin', file, { ifMatch: etag })).resolves.toMatchObject({ etag: expect.stringMatching(/-2$/) });
    expect(await unfinishedUploads()).toBe(0);
  });

  it('a PUT retried after its first attempt was written is not reported as a precondition failure', async () => {
    const store = bucket.store('retry', { maxAttempts: 3 });
    let puts = 0;
    // Inside the retry loop: the first PutObject reaches the server, then its answer is "lost".
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'PutObjectCommand' && ++puts === 1) {
          throw Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET', $metadata: {} });
        }
        return out;
      },
      { step: 'deserialize', name: 'loseFirstAnswer', priority: 'low' },
    );
    const { etag } = await store.put('once.json', '{"a":1}', { ifNoneMatch: '*' });
    expect(puts).toBe(2);
    expect(etag).toBe(md5('{"a":1}'));
    // Someone else's object is still refused.
    await expect(bucket.store('retry').put('once.json', '{"a":2}', { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
  });

  it("a retried compare-and-swap that met another writer's identical bytes still fails", async () => {
    const store = bucket.store('retry-cas', { maxAttempts: 3 });
    const other = bucket.store('retry-cas');
    const v1 = await other.put('counter.json', '5');
    let attempts = 0;
    // First attempt: another writer stores the same new value first, and our request is lost.
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutObjectCommand' && ++attempts === 1) {
          await other.put('counter.json', '6', { ifMatch: v1.etag });
          throw Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET', $metadata: {} });
        }
        return next(args);
      },
      { step: 'deserialize', name: 'otherWriterFirst', priority: 'low' },
    );
    await expect(store.put('counter.json', '6', { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
    expect(attempts).toBe(2);
  });

  it('getStream returns the object as a stream', async () => {
    const store: S3Store = bucket.store('stream');
    const body = randomBytes(2 * MiB);
    await store.put('s.bin', body);
    const chunks: Buffer[] = [];
    for await (const c of (await store.getStream('s.bin'))!) chunks.push(c as Buffer);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(body));
  });
});
