/**
 * The sandbox's Iceberg REST catalog with its metadata files on S3 (radosgw): its writeObject knob
 * given a test bucket's client, as `insight-export sandbox --catalog-warehouse s3://...` gives it
 * the product's S3 store. For the test files that commit through a catalog to an S3 destination.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import type { CatalogOptions } from '@insight-export/sandbox';
import { useCatalogSandbox, type CatalogSandbox } from './catalog-sandbox.js';
import { useS3CredentialsInEnv, useTestBucket, type TestBucket } from './s3.js';

/** The catalog's writeObject: an `s3://bucket/key` URI put through the test bucket's raw client. */
export function writeObjectTo(bucket: TestBucket): NonNullable<CatalogOptions['writeObject']> {
  return async (uri, text) => {
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri)!;
    await bucket.client.send(new PutObjectCommand({ Bucket: m[1], Key: m[2], Body: text }));
  };
}

export interface S3CatalogSandbox extends CatalogSandbox {
  bucket: TestBucket;
  /** The test server's S3 settings, for a run's `env` (filled in beforeAll). */
  s3Env: Readonly<Record<string, string>>;
}

/**
 * A fresh bucket (`bucketPrefix`-...) and a catalog sandbox keeping its metadata files in it. With
 * `inProcessCli`, every S3 setting (endpoint and region too) is in process.env from beforeAll to
 * afterAll, where the in-process CLI reads them; the previous values come back after.
 */
export function useS3CatalogSandbox(bucketPrefix: string, opts: { inProcessCli?: boolean } = {}): S3CatalogSandbox {
  const bucket = useTestBucket(bucketPrefix);
  const c = useCatalogSandbox({ writeObject: writeObjectTo(bucket) });
  const s3Env = useS3CredentialsInEnv();
  if (opts.inProcessCli) {
    const saved = new Map<string, string | undefined>();
    beforeAll(() => {
      for (const [k, v] of Object.entries(s3Env)) {
        saved.set(k, process.env[k]);
        process.env[k] = v;
      }
    });
    afterAll(() => {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
  }
  return { ...c, bucket, s3Env };
}

/** The process environment set to `env` while `fn` runs (an in-process CLI reads its settings there). */
export async function withProcessEnv<T>(env: Readonly<Record<string, string>>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
