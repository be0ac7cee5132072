/**
 * A throwaway Ceph radosgw (scripts/s3/radosgw.sh, as the suite's) for the export of
 * jobs/s3-export.yaml to its own bucket, and the download of what it wrote, to read it back.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

const SCRIPT = fileURLToPath(new URL('../s3/radosgw.sh', import.meta.url));

export interface Radosgw {
  /** The environment a child run reaches it with. */
  env: Record<string, string>;
  /** Creates a bucket (an existing one is kept). */
  createBucket(bucket: string): Promise<void>;
  /** Downloads every object under s3://bucket/prefix into `into` (keys relative to the prefix). */
  download(bucket: string, prefix: string, into: string): Promise<void>;
  stop(): Promise<void>;
}

function bash(args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`radosgw.sh ${args.join(' ')}: ${(stderr || err.message).trim()}`)) : resolve(stdout),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

/** Starts radosgw on a free loopback port (needs the Debian packages radosgw ceph-mon ceph-osd ceph-common). */
export async function startRadosgw(): Promise<Radosgw> {
  const base = mkdtempSync(join(tmpdir(), 'exports-unchanged-rgw-'));
  const dir = join(base, 'cluster');
  const port = await freePort();
  const out = await bash(['start', dir, String(port)], { RGW_WATCH_PID: String(process.pid) });
  const vars = Object.fromEntries([...out.matchAll(/^(S3_\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  // The SDK's notice that later versions need Node 22 says nothing about this export.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const credentials = { accessKeyId: vars.S3_ACCESS_KEY_ID!, secretAccessKey: vars.S3_SECRET_ACCESS_KEY! };
  const client = new S3Client({ endpoint: vars.S3_ENDPOINT!, region: vars.S3_REGION!, forcePathStyle: true, credentials });
  return {
    env: {
      S3_ENDPOINT: vars.S3_ENDPOINT!,
      AWS_REGION: vars.S3_REGION!,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    createBucket: async (bucket) => {
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (e) {
        if (!/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test((e as Error).name)) throw e;
      }
    },
    download: async (bucket, prefix, into) => {
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, ContinuationToken: token }));
        for (const o of page.Contents ?? []) {
          const body = await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }))).Body!.transformToByteArray();
          const file = join(into, ...o.Key!.slice(prefix.length + 1).split('/'));
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, body);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    stop: async () => {
      client.destroy();
      await bash(['stop', dir, String(port)]);
      rmSync(base, { recursive: true, force: true });
    },
  };
}
