/** openStore: destination strings -> the right store; credentials never in a location or an error. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidDestinationError } from '../../src/store/errors.js';
import { LocalStore } from '../../src/store/local.js';
import { openStore, parseStoreDestination } from '../../src/store/open-store.js';
import { S3Store } from '../../src/store/s3.js';
import { useTestBucket } from '../helpers/s3.js';

describe('openStore', () => {
  const bucket = useTestBucket('open-store');

  it.each([
    ['s3://my-bucket/exports/eth/', 'my-bucket', 'exports/eth'],
    ['s3://my-bucket', 'my-bucket', ''],
    ['S3://my.bucket/a', 'my.bucket', 'a'],
  ])('%s is an S3Store on bucket %s, prefix "%s"', async (dest, b, prefix) => {
    const store = await openStore(dest, { s3: { endpoint: 'http://127.0.0.1:1', region: 'us-east-1' } });
    expect(store).toBeInstanceOf(S3Store);
    expect((store as S3Store).bucket).toBe(b);
    expect((store as S3Store).prefix).toBe(prefix);
    expect(store.location).toBe(`s3://${b}${prefix ? `/${prefix}` : ''}`);
  });

  it('a relative path is a LocalStore resolved against cwd; an absolute one is kept', async () => {
    const rel = await openStore('out/run-1', { cwd: '/srv/jobs' });
    expect(rel).toBeInstanceOf(LocalStore);
    expect(rel.location).toBe(path.resolve('/srv/jobs', 'out/run-1'));
    expect((await openStore('/data/export')).location).toBe('/data/export');
    expect((await openStore('./x')).location).toBe(path.resolve(process.cwd(), 'x'));
  });

  it('accepts an already parsed destination', async () => {
    expect((await openStore({ kind: 'local', path: '/tmp/x' })).location).toBe('/tmp/x');
    expect((await openStore({ kind: 's3', bucket: 'b-1', prefix: 'p' }, { s3: { endpoint: 'http://127.0.0.1:1' } })).location).toBe(
      's3://b-1/p',
    );
  });

  it.each([
    ['ftp://host/x', /unsupported scheme/],
    ['s3://Bad_Bucket/x', /invalid bucket name/],
    ['s3://b-1/a//b', /invalid prefix/],
    ['s3://b-1/../x', /invalid prefix/],
    ['', /empty/],
    ['mailto:x', /not a URL or a path/],
  ])('%s is an InvalidDestinationError (exit code 2)', (dest, message) => {
    const err = (() => {
      try {
        parseStoreDestination(dest, '/');
      } catch (e) {
        return e as InvalidDestinationError;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(InvalidDestinationError);
    expect(err!.message).toMatch(message);
    expect(err!.exitCode).toBe(2);
  });

  it('credentials written into the destination are refused without being echoed', async () => {
    const dest = 's3://AKIAEXAMPLE:verysecretvalue@bucket/x';
    let err: Error | undefined;
    try {
      await openStore(dest);
    } catch (e) {
      err = e as Error;
    }
    expect(err).toBeInstanceOf(InvalidDestinationError);
    expect(err!.message).not.toContain('verysecretvalue');
    expect(err!.message).not.toContain('AKIAEXAMPLE');
  });

  it('opens a working S3Store from the resolved-config shape (endpoint, region, path style)', async () => {
    const cfg = bucket.config;
    const store = await openStore(`s3://${bucket.bucket}/via-open-store`, {
      s3: { endpoint: cfg.endpoint, region: cfg.region, forcePathStyle: true, credentials: cfg.credentials },
    });
    await store.put('k.json', '{"ok":true}');
    expect((await store.get('k.json'))!.body.toString()).toBe('{"ok":true}');
    expect(store.location).not.toContain(cfg.credentials.secretAccessKey);
    await store.close?.();
  });

  it('opens a working LocalStore', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'open-store-'));
    try {
      const store = await openStore(dir);
      await store.put('a/b.json', '1');
      expect((await store.get('a/b.json'))!.body.toString()).toBe('1');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
