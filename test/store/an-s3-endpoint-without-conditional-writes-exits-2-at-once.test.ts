/**
 * An S3 endpoint that answers conditional PUTs (If-None-Match / If-Match, which the job's lease and
 * commits rely on) with 501 Not Implemented, as OpenStack Swift's S3 layer does: the run ends at
 * once (not after the store's 30 s retry budget) with exit 2, a message that says conditional
 * writes are unsupported and what to do, and nothing written; `run --dry-run` finds the same.
 * The endpoint is the test radosgw behind a small proxy that refuses conditional PUTs.
 */
import { createServer, request, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { s3TestConfig, useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 3, transactions: 1_000 });
const bucket = useTestBucket('no-conditional');
useS3CredentialsInEnv();
const tmp = useTempDir('no-conditional-');
let proxy: Server;
let proxyUrl: string;
let refused = 0;

const NOT_IMPLEMENTED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NotImplemented</Code><Message>Conditional object PUTs are not supported.</Message></Error>';

beforeAll(async () => {
  const upstream = new URL((await s3TestConfig()).endpoint);
  proxy = createServer((req, res) => {
    const conditional = req.headers['if-none-match'] !== undefined || req.headers['if-match'] !== undefined;
    if (req.method === 'PUT' && conditional) {
      refused++;
      req.resume();
      res.writeHead(501, { 'content-type': 'application/xml' }).end(NOT_IMPLEMENTED);
      return;
    }
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
});

async function jobFile(): Promise<string> {
  const file = join(tmp.dir, 'job.yaml');
  await writeFile(
    file,
    stringify({
      name: 'swift',
      source: { base_url: sandbox.url, chains: [1] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
      output: { destination: `s3://${bucket.bucket}/swift`, format: 'ndjson' },
    }),
  );
  return file;
}

const objects = async () => (await bucket.client.send(new ListObjectsV2Command({ Bucket: bucket.bucket, Prefix: 'swift/' }))).KeyCount ?? 0;

it.each([
  ['run', []],
  ['run --dry-run', ['--dry-run']],
])('%s: exit 2 at once, saying conditional writes are unsupported and what to do; nothing written', async (_name, more) => {
  const before = refused;
  const started = Date.now();
  const r = await runCli(['run', await jobFile(), '--s3-endpoint', proxyUrl, '--log-level', 'silent', ...more]);
  const seconds = (Date.now() - started) / 1000;
  expect(refused - before, 'the endpoint was asked a conditional PUT').toBeGreaterThan(0);
  expect(r.stderr).toMatch(/^error: The S3 endpoint of s3:\/\/\S+ does not support conditional writes/m);
  expect(r.stderr).toMatch(/NotImplemented \(HTTP 501\)/);
  expect(r.stderr).toMatch(/Hint: .*conditional PUTs/);
  expect(r.stderr).not.toMatch(/unavailable|reachable|tried \d+ times/);
  expect(r.code, r.stderr).toBe(2);
  // Not retried: the store's retry budget is 30 s.
  expect(seconds).toBeLessThan(10);
  expect(refused - before).toBeLessThanOrEqual(2);
  expect(await objects()).toBe(0);
  console.log(`[s3] conditional PUT answered 501 -> ${_name}: exit ${r.code} in ${seconds.toFixed(1)} s, ${refused - before} PUT refused`);
});

it('the same job against the endpoint itself (conditional writes supported): dry run exits 0', async () => {
  const r = await runCli(['run', await jobFile(), '--dry-run', '--s3-endpoint', (await s3TestConfig()).endpoint, '--log-level', 'silent']);
  expect(r.code, r.stderr).toBe(0);
  expect(await objects()).toBe(0);
});
