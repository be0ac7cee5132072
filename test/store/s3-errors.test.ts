/** S3 failures become typed errors that name the bucket/key, never the credentials. */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BucketNotFoundError, StoreAccessError, StoreUnavailableError } from '../../src/store/errors.js';
import { S3Store } from '../../src/store/s3.js';
import { s3TestConfig, useTestBucket, type S3TestConfig } from '../helpers/s3.js';

async function failure(p: Promise<unknown> | AsyncIterable<unknown>): Promise<Error> {
  try {
    if (Symbol.asyncIterator in p) {
      for await (const _ of p as AsyncIterable<unknown>) {
        // drain
      }
    } else {
      await p;
    }
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the operation to fail');
}

/** Every kind of operation, so each mapping path (PUT, GET, HEAD without body, LIST, DELETE) is covered. */
function operations(store: S3Store): Array<[string, () => Promise<unknown> | AsyncIterable<unknown>]> {
  return [
    ['put', () => store.put('k/x.json', '{}')],
    ['get', () => store.get('k/x.json')],
    ['head', () => store.head('k/x.json')],
    ['list', () => store.list('k/')],
    ['deleteMany', () => store.deleteMany(['k/x.json'])],
  ];
}

describe('S3Store errors', () => {
  const bucket = useTestBucket('s3-errors');
  let cfg: S3TestConfig;
  beforeAll(async () => {
    cfg = await s3TestConfig();
  });

  it('a wrong secret key is a StoreAccessError naming the bucket and the fix, not the secret', async () => {
    const secret = 'wrong-secret-that-must-not-leak';
    const store = new S3Store({
      ...cfg,
      bucket: bucket.bucket,
      prefix: 'p',
      credentials: { accessKeyId: cfg.credentials.accessKeyId, secretAccessKey: secret },
    });
    for (const [op, fn] of operations(store)) {
      const err = await failure(fn());
      expect(err, op).toBeInstanceOf(StoreAccessError);
      expect(err.message, op).toContain(bucket.bucket);
      expect(err.message, op).not.toContain(secret);
      expect(JSON.stringify({ ...err, cause: undefined }), op).not.toContain(secret);
    }
    const putErr = (await failure(store.put('k/x.json', '{}'))) as StoreAccessError;
    expect(putErr.shortMessage).toContain('SignatureDoesNotMatch');
    expect(putErr.hint).toMatch(/AWS_SECRET_ACCESS_KEY/);
    await store.close();
  });

  it('an unknown access key is a StoreAccessError (InvalidAccessKeyId)', async () => {
    const store = new S3Store({
      ...cfg,
      bucket: bucket.bucket,
      credentials: { accessKeyId: 'NOSUCHKEY', secretAccessKey: 'whatever-secret' },
    });
    const err = (await failure(store.put('x.json', '{}'))) as StoreAccessError;
    expect(err).toBeInstanceOf(StoreAccessError);
    expect(err.shortMessage).toContain('InvalidAccessKeyId');
    expect(err.hint).toMatch(/AWS_ACCESS_KEY_ID/);
    expect(err.message).not.toContain('whatever-secret');
    await expect(store.head('x.json')).rejects.toBeInstanceOf(StoreAccessError);
    await store.close();
  });

  it('no credentials found by the provider chain is a StoreAccessError saying which variables to set', async () => {
    const store = new S3Store({
      ...cfg,
      bucket: bucket.bucket,
      credentials: async () => {
        throw Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
      },
    });
    const err = (await failure(store.put('x.json', '{}'))) as StoreAccessError;
    expect(err).toBeInstanceOf(StoreAccessError);
    expect(err.hint).toMatch(/AWS_ACCESS_KEY_ID/);
    await store.close();
  });

  it('a missing bucket is a BucketNotFoundError for every operation (HEAD included)', async () => {
    const store = new S3Store({ ...cfg, bucket: `${bucket.bucket}-absent` });
    for (const [op, fn] of operations(store)) {
      const err = await failure(fn());
      expect(err, op).toBeInstanceOf(BucketNotFoundError);
      expect((err as BucketNotFoundError).bucket, op).toBe(`${bucket.bucket}-absent`);
    }
    await store.close();
  });

  it('an absent key in an existing bucket is null, not an error', async () => {
    const store = bucket.store('absent');
    expect(await store.head('x.json')).toBeNull();
    expect(await store.get('x.json')).toBeNull();
  });

  describe('unreachable endpoint', () => {
    let blackhole: Server;
    let blackholePort = 0;
    const sockets = new Set<Socket>();
    let closedPort = 0;

    beforeAll(async () => {
      // Accepts connections and never answers.
      blackhole = createServer((s) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
      blackholePort = (blackhole.address() as { port: number }).port;
      // A port nothing listens on: bind, read the number, close.
      const tmp = createServer();
      await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', r));
      closedPort = (tmp.address() as { port: number }).port;
      await new Promise<void>((r) => tmp.close(() => r()));
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => blackhole.close(() => r()));
    });

    it('connection refused is a StoreUnavailableError after the retries, within a bounded time', async () => {
      const store = new S3Store({
        ...cfg,
        endpoint: `http://127.0.0.1:${closedPort}`,
        bucket: 'any-bucket',
        maxAttempts: 3,
        retryBudgetMs: 0,
      });
      for (const [op, fn] of operations(store)) {
        const t0 = Date.now();
        const err = await failure(fn());
        expect(err, op).toBeInstanceOf(StoreUnavailableError);
        expect(err.message, op).toContain('ECONNREFUSED');
        expect(err.message, op).toContain('after 3 attempts');
        expect(Date.now() - t0, op).toBeLessThan(10_000);
      }
      await store.close();
    });

    it('a server that never answers is a StoreUnavailableError once the socket timeout passes', async () => {
      const store = new S3Store({
        ...cfg,
        endpoint: `http://127.0.0.1:${blackholePort}`,
        bucket: 'any-bucket',
        maxAttempts: 2,
        socketTimeoutMs: 400,
        retryBudgetMs: 0,
      });
      const t0 = Date.now();
      const err = await failure(store.put('x.json', '{}'));
      const ms = Date.now() - t0;
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeGreaterThanOrEqual(400);
      expect(ms).toBeLessThan(10_000);
      await store.close();
    });
  });
});
