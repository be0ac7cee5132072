/**
 * The test run's S3 server (started by test/setup/s3.ts) and throwaway buckets on it.
 *
 *   const cfg = await s3TestConfig();                // endpoint, region, credentials
 *   const b = await createTestBucket('sink-upload'); // fresh bucket; await b.cleanup() at the end
 *   const store = b.store('some/prefix');            // an S3Store on it
 *
 * or, per test file: `const bucket = useTestBucket('sink-upload')` (beforeAll/afterAll).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, inject } from 'vitest';
import { S3Store, type S3StoreOptions } from '../../src/store/s3.js';
import { useForFile } from './use-for-file.js';

export interface S3TestConfig {
  endpoint: string;
  region: string;
  forcePathStyle: true;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

const READY_TIMEOUT_MS = 120_000;
let ready: Promise<S3TestConfig> | undefined;

/** Endpoint and credentials of the run's S3 server; waits until the server answers. */
export function s3TestConfig(): Promise<S3TestConfig> {
  ready ??= waitReady();
  return ready;
}

async function waitReady(): Promise<S3TestConfig> {
  const server = inject('s3');
  if (!server) throw new Error('No S3 test server: test/setup/s3.ts is not registered as a vitest globalSetup');
  if (server.readyFile) {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!existsSync(server.readyFile)) {
      if (Date.now() > deadline)
        throw new Error(`The S3 test server did not come up within ${READY_TIMEOUT_MS / 1000} s (${server.endpoint})`);
      await sleep(25);
    }
    const status = JSON.parse(readFileSync(server.readyFile, 'utf8')) as { ok: boolean; error?: string };
    if (!status.ok) throw new Error(status.error ?? 'The S3 test server failed to start');
  }
  return {
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  };
}

/** Environment for a child process (e.g. the CLI) that should use the test S3 server. */
export async function s3TestEnv(): Promise<Record<string, string>> {
  const c = await s3TestConfig();
  return {
    S3_ENDPOINT: c.endpoint,
    AWS_REGION: c.region,
    AWS_ACCESS_KEY_ID: c.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: c.credentials.secretAccessKey,
  };
}

/**
 * For the calling test file: the test server's credentials in process.env from beforeAll to
 * afterAll, where the AWS SDK's default chain reads them as in production, and the environment
 * for child processes (s3TestEnv). The previous values come back after: test files share their
 * worker process.
 */
export function useS3CredentialsInEnv(): Readonly<Record<string, string>> {
  const env: Record<string, string> = {};
  const saved = new Map<string, string | undefined>();
  beforeAll(async () => {
    Object.assign(env, await s3TestEnv());
    for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) {
      saved.set(key, process.env[key]);
      process.env[key] = env[key];
    }
  });
  afterAll(() => {
    for (const [key, value] of saved) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  return env;
}

export function s3TestClient(c: S3TestConfig): S3Client {
  return new S3Client({
    endpoint: c.endpoint,
    region: c.region,
    forcePathStyle: true,
    credentials: c.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export interface TestBucket {
  bucket: string;
  config: S3TestConfig;
  /** Raw SDK client for assertions that must not go through the code under test. */
  client: S3Client;
  /** An S3Store on this bucket (prefix default ""). */
  store(prefix?: string, opts?: Partial<S3StoreOptions>): S3Store;
  /** Deletes every object, aborts unfinished multipart uploads, deletes the bucket. */
  cleanup(): Promise<void>;
}

/** A fresh, uniquely named bucket ("<prefix>-<time>-<random>", valid S3 name). */
export async function createTestBucket(prefix: string): Promise<TestBucket> {
  const config = await s3TestConfig();
  const client = s3TestClient(config);
  const stem =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'test';
  const bucket = `${stem}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  const stores: S3Store[] = [];
  return {
    bucket,
    config,
    client,
    store(storePrefix = '', opts = {}) {
      const s = new S3Store({ ...config, ...opts, bucket, prefix: storePrefix });
      stores.push(s);
      return s;
    },
    async cleanup() {
      await emptyBucket(client, bucket);
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      for (const s of stores) await s.close();
      client.destroy();
    },
  };
}

/** createTestBucket in beforeAll, cleanup in afterAll; the returned handle works inside tests. */
export function useTestBucket(prefix: string): TestBucket {
  return useForFile(
    'useTestBucket(): bucket',
    () => createTestBucket(prefix),
    (bucket) => bucket.cleanup(),
  );
}

async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const u of uploads.Uploads ?? []) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key!, UploadId: u.UploadId! }));
  }
}
