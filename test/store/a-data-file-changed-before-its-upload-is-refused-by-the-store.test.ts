/**
 * A data file whose bytes change between its writing and its upload (a fault of the staging disk
 * or of memory; a byte flipped in the staged file here, at the same size) is refused by the store,
 * not kept: each file is uploaded with the digests its writer took while writing it.
 *
 * What radosgw 16 (the test S3) checks, found by trying it: Content-MD5 (a wrong one is answered
 * 400 BadDigest), not x-amz-checksum-sha256 (ignored, and not stored); AWS checks both. A body
 * altered on the wire is refused by either for its signed payload hash (SigV4), but that hash is
 * computed from the bytes read for the upload, so only a digest taken at write time catches a
 * staged file that changed. A file of several parts has no whole-object digest a store checks: its
 * bytes are compared with the writer's SHA-256 as they are read and the upload is aborted.
 *
 * Through the CLI: the run exits 1 naming the window, the store holds no object under the key, and
 * the next run exports the window exactly (equal to a fresh export; `verify --content` exit 0).
 */
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { writeFile } from 'node:fs/promises';
import { S3Store } from '../../src/store/s3.js';
import { ContentChecksumError } from '../../src/store/errors.js';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { downloadPrefix, listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { s3TestConfig, useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { createHash } from 'node:crypto';

const sandbox = useSandbox({ seed: 5, transactions: 3_000 });
const bucket = useTestBucket('content-refused');
useS3CredentialsInEnv();
const tmp = useTempDir('content-refused-');

afterEach(() => {
  vi.restoreAllMocks();
});

async function jobFile(name: string, destination: string): Promise<string> {
  const file = join(tmp.dir, `${name}.yaml`);
  await writeFile(
    file,
    stringify({
      name,
      source: { base_url: sandbox.url, chains: [1, 8453] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
      output: { destination, format: 'ndjson', compression: 'none' },
    }),
  );
  return file;
}

/** Flips one byte in the middle of a local file, keeping its size. */
async function flipByte(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    const { size } = await fh.stat();
    const at = Math.floor(size / 2);
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, at);
    b[0] = b[0] === 0x31 ? 0x32 : 0x31;
    await fh.write(b, 0, 1, at);
  } finally {
    await fh.close();
  }
}

async function run(job: string, ...flags: string[]): Promise<{ code: number; report: RunReport; stderr: string }> {
  const endpoint = (await s3TestConfig()).endpoint;
  const r = await runCli(['run', job, '--s3-endpoint', endpoint, '--json', '--log-level', 'silent', ...flags]);
  return { code: r.code, report: JSON.parse(r.stdout) as RunReport, stderr: r.stderr };
}

/** Every data file of a local export with its SHA-256. */
function dataFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of listFiles(root).sort())
    if (!rel.startsWith('_state/') && !rel.startsWith('.insight-export-tmp/'))
      out.set(
        rel,
        createHash('sha256')
          .update(readFileSync(join(root, rel)))
          .digest('hex'),
      );
  return out;
}

const absent = async (key: string) =>
  bucket.client.send(new HeadObjectCommand({ Bucket: bucket.bucket, Key: key })).then(
    () => false,
    (err: { $metadata?: { httpStatusCode?: number } }) => err.$metadata?.httpStatusCode === 404,
  );

describe('a staged data file changed before its upload', () => {
  it(
    'radosgw refuses it (Content-MD5 sent from the writer), the run exits 1, the next run exports it exactly',
    { timeout: 120_000 },
    async () => {
      const job = await jobFile('flipped', `s3://${bucket.bucket}/flipped`);
      const putFile = S3Store.prototype.putFile;
      let flipped: string | null = null;
      vi.spyOn(S3Store.prototype, 'putFile').mockImplementation(async function (this: S3Store, key, path, opts) {
        if (flipped === null && key.endsWith('.ndjson')) {
          flipped = key;
          await flipByte(path);
        }
        return putFile.call(this, key, path, opts);
      });
      const first = await run(job);
      expect(flipped).not.toBeNull();
      expect(first.code, first.stderr).toBe(1);
      expect(first.report.failed).toHaveLength(1);
      const failed = first.report.failed[0]!;
      expect(failed.exit_code).toBe(1);
      expect(failed.error).toContain(`The upload of ${flipped} was refused: its bytes differ from those written`);
      // The store refused it: the answer is radosgw's, not a check of the exporter's own.
      expect(failed.error).toContain('BadDigest (HTTP 400)');
      expect(await absent(`flipped/${flipped}`)).toBe(true);
      vi.restoreAllMocks();

      const second = await run(job);
      expect(second.code, second.stderr).toBe(0);
      expect(second.report.windows.done).toBe(1);
      const verified = await runCli([
        'verify',
        job,
        '--content',
        '--s3-endpoint',
        (await s3TestConfig()).endpoint,
        '--log-level',
        'silent',
      ]);
      expect(verified.code, verified.stdout).toBe(0);

      // Equal to a fresh export, byte for byte.
      const fresh = join(tmp.dir, 'fresh');
      const freshJob = await jobFile('flipped', fresh);
      expect((await runCli(['run', freshJob, '--log-level', 'silent'])).code).toBe(0);
      const got = join(tmp.dir, 'got');
      await downloadPrefix(bucket.client, bucket.bucket, 'flipped/', got);
      expect(dataFiles(got)).toEqual(dataFiles(fresh));
      expect(dataFiles(fresh).has(flipped!)).toBe(true);
    },
  );

  it('a file of several parts: the bytes read for the upload are compared with the writer SHA-256 and the upload is aborted', async () => {
    const store = bucket.store('parts', { partSize: 5 * 1024 * 1024 });
    const path = join(tmp.dir, 'big.bin');
    const bytes = Buffer.alloc(11 * 1024 * 1024, 7);
    const digests = {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      md5: createHash('md5').update(bytes).digest('hex'),
    };
    bytes[bytes.length - 3] = 8;
    await writeFile(path, bytes);
    const err = await store.putFile('t/big.ndjson', path, { digests }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentChecksumError);
    expect(await absent('parts/t/big.ndjson')).toBe(true);
    const uploads = await bucket.client.send(new ListMultipartUploadsCommand({ Bucket: bucket.bucket, Prefix: 'parts/' }));
    expect(uploads.Uploads ?? []).toEqual([]);
    // The same bytes with their own digests go up whole.
    bytes[bytes.length - 3] = 7;
    await writeFile(path, bytes);
    await store.putFile('t/big.ndjson', path, { digests });
    expect(await absent('parts/t/big.ndjson')).toBe(false);
  });
});
