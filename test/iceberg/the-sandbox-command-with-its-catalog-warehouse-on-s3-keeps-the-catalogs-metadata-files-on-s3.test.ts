/**
 * Issue 44: `insight-export sandbox --catalog-warehouse s3://bucket/prefix` (the CLI command, a
 * child process) keeps its catalog's metadata files on S3, written with the product's S3 store and
 * the S3 settings of its environment (the sandbox package has no S3 client of its own). A run with
 * an S3 destination committing through that catalog leaves each metadata file the catalog names on
 * S3 under the table's location; a table created without a location gets one under the warehouse
 * prefix, its metadata file there too. SIGTERM ends the sandbox with exit 0.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { IcebergRestCatalog } from 'iceberg-js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withProcessEnv } from '../helpers/catalog-on-s3.js';
import { createTableRequest } from '../helpers/catalog-sandbox.js';
import { runCli } from '../helpers/cli-in-process.js';
import { TABLE, walletJob } from '../helpers/iceberg-history.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { childEnv, useTestCli, writeJob } from '../reliability/harness.js';

const bucket = useTestBucket('sandbox-wh');
const s3Env = useS3CredentialsInEnv();
const work = useTestCli('sandbox-wh-s3-');

let child: ReturnType<typeof spawn> | undefined;
let exit: Promise<number | null>;
let urls: Record<string, string> = {};

beforeAll(async () => {
  const warehouse = `s3://${bucket.bucket}/wh`;
  child = spawn(process.execPath, [work.cli.path, 'sandbox', '--port', '0', '--transactions', '300', '--catalog-warehouse', warehouse], {
    env: childEnv(s3Env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  exit = new Promise((resolve) => child!.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const t = setInterval(() => {
      if (!/^catalog_url=\S+$/m.test(out)) return;
      clearInterval(t);
      urls = Object.fromEntries([...out.matchAll(/^(\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
      resolve();
    }, 20);
    void exit.then((code) => {
      clearInterval(t);
      reject(new Error(`the sandbox exited ${code}: ${err}`));
    });
  });
});

afterAll(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
});

async function onS3(uri: string): Promise<boolean> {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri)!;
  try {
    await bucket.client.send(new HeadObjectCommand({ Bucket: m[1], Key: m[2] }));
    return true;
  } catch {
    return false;
  }
}

it('a run through `sandbox --catalog-warehouse s3://...` leaves the catalog metadata files on S3; SIGTERM ends it with 0', async () => {
  const catalogUrl = urls.catalog_url!;
  const job = { ...walletJob('sbxs3', '2024-02-03'), source: { base_url: urls.url, chains: [1, 8453] } };
  const jobFile = await writeJob(join(work.dir, 'job'), job);
  const destination = `s3://${bucket.bucket}/out`;
  const flags = ['--format', 'iceberg', '--catalog-uri', catalogUrl, '--destination', destination, '--log-level', 'error'];
  const run = await withProcessEnv(s3Env, () => runCli(['run', jobFile, ...flags, '--staging-dir', join(work.dir, 'staging')]));
  expect(run.code, run.stderr).toBe(0);

  const js = new IcebergRestCatalog({ baseUrl: catalogUrl, auth: { type: 'none' } });
  const loaded = await js.loadTable({ namespace: ['sbxs3'], name: TABLE });
  expect(loaded['current-snapshot-id']).toBeTruthy();
  const res = await fetch(`${catalogUrl}/v1/namespaces/sbxs3/tables/${TABLE}`);
  const location = ((await res.json()) as { 'metadata-location': string })['metadata-location'];
  expect(location).toMatch(new RegExp(`^${destination}/${TABLE}/metadata/\\d{5}-[0-9a-f-]+\\.metadata\\.json$`));
  expect(await onS3(location), location).toBe(true);

  // A table created with no location: under the warehouse prefix on S3.
  const created = await fetch(`${catalogUrl}/v1/namespaces/sbxs3/tables`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(createTableRequest('no_location')),
  });
  expect(created.status).toBe(200);
  const createdLocation = ((await created.json()) as { 'metadata-location': string })['metadata-location'];
  expect(createdLocation).toMatch(new RegExp(`^s3://${bucket.bucket}/wh/sbxs3/no_location/metadata/\\d{5}-`));
  expect(await onS3(createdLocation), createdLocation).toBe(true);

  child!.kill('SIGTERM');
  expect(await exit).toBe(0);
});
