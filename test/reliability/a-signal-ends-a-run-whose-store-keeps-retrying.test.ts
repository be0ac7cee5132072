/**
 * SIGTERM / SIGINT end a run promptly whatever it is waiting for: here every S3 request answers
 * 503 and the retry budget is ten minutes, so the run would keep retrying its first write (the
 * lease) for that long. After one signal the run stops within its grace period (and the few
 * seconds after it a stopped run is given) with exit 130.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { useSandbox } from '../helpers/sandbox.js';
import { runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox({ transactions: 1_000 });
const work = useTestCli('signal-retrying-');

let server: Server;
let s3Url = '';
let s3Requests = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    s3Requests++;
    req.resume();
    res.writeHead(503, { 'content-type': 'application/xml' });
    res.end('<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>down</Message></Error>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  s3Url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Sends `signal` once the store has been asked a few times (it is retrying by then). */
function signalWhenRetrying(signal: NodeJS.Signals) {
  return (child: ChildProcess) => {
    const poll = setInterval(() => {
      if (s3Requests < 3) return;
      clearInterval(poll);
      child.kill(signal);
    }, 20);
    child.on('close', () => clearInterval(poll));
  };
}

it.each(['SIGTERM', 'SIGINT'] as const)('%s: exit 130 while the store is still retrying', { timeout: 120_000 }, async (signal) => {
  s3Requests = 0;
  const base = join(work.dir, signal);
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const jobFile = await writeJob(base, {
    name: 'stuck-store',
    source: { base_url: sandbox.url, chains: [1] },
    targets: [{ wallet: alice, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
    output: { format: 'ndjson', destination: 's3://stuck-bucket/prefix' },
  });
  const stopped = await runCli(
    work.cli,
    // A short grace period: the stop has nothing to commit, and the run ends at most a few seconds after it.
    ['run', jobFile, '--log-level', 'warn', '--staging-dir', join(base, 'staging'), '--s3-retry-budget', '600s', '--stop-grace', '2s'],
    {
      env: { S3_ENDPOINT: s3Url, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' },
      onSpawn: signalWhenRetrying(signal),
      // Far below the retry budget: a run that waits for its store to give up fails here.
      timeoutMs: 90_000,
    },
  );
  expect(s3Requests).toBeGreaterThanOrEqual(3);
  expect(stopped.code, stopped.stderr).toBe(ExitCode.interrupted);
  expect(stopped.stderr).toMatch(/stopping: no new requests/);
  expect(stopped.stderr).not.toMatch(/internal error|\n\s+at /);
});
