/**
 * A service (or a proxy in front of it) that refuses the count requests of settling (HTTP 400 to
 * every `aggregate`): the run still exports the windows it planned, reports the recount's error
 * (`settle.error`, status failed) and exits with the error's code (2: a refused query, retrying
 * alone cannot help); nothing is settled, nothing is exported again. Once the service counts
 * again, the next run recounts those windows and settles them.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { aliceTransactionsJob, writeJob } from '../reliability/harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('settle-refused-');

/** A proxy answering 400 to every count request and forwarding the rest to the sandbox. */
async function refusingCounts(): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(sandbox.url);
  const server = createServer((req, res) => {
    if (new URL(req.url ?? '/', target.origin).searchParams.has('aggregate')) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'aggregate is not allowed on this route' }));
      return;
    }
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${target.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a recount the service refuses', () => {
  it('fails the run after its exports; the next run recounts the windows and settles them', { timeout: 120_000 }, async () => {
    const out = join(tmp.dir, 'out');
    const jobFile = await writeJob(tmp.dir, aliceTransactionsJob(sandbox, 'refused', '1d', out));
    const first = await runCli(['run', jobFile, '--to', '2024-02-03', '--log-level', 'error']);
    expect(first.code, first.stderr).toBe(0);

    const proxy = await refusingCounts();
    let refused: RunReport;
    try {
      const r = await runCli(['run', jobFile, '--json', '--log-level', 'error', '--base-url', proxy.url]);
      expect(r.code, r.stderr).toBe(2);
      refused = JSON.parse(r.stdout) as RunReport;
    } finally {
      await proxy.close();
    }
    expect(refused.status).toBe('failed');
    expect(refused.windows).toMatchObject({ planned: 3, done: 3, failed: 0 });
    expect(refused.settle!.error).toMatch(/400/);
    expect(refused.settle!.exit_code).toBe(2);
    expect(refused.settle).toMatchObject({ recounted: 0, settled: 0, reexported: 0 });

    const next = await runCli(['run', jobFile, '--json', '--log-level', 'error']);
    expect(next.code, next.stderr).toBe(0);
    const report = JSON.parse(next.stdout) as RunReport;
    // Both runs' windows: the first's 6, the refused run's 3.
    expect(report.settle).toMatchObject({ recounted: 9, settled: 9, reexported: 0 });
    expect(report.settle!.error).toBeUndefined();
  });
});
