/**
 * A run that fails before its plan (here the service is down during the head search of
 * `to: latest`) is a failed run like any other: it pushes its metrics with status "failed" (and
 * no last-success time), prints its report with --json (status failed, the error), writes that
 * report beside the state when it held the lease, and exits with the error's code.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { freePort } from '../helpers/free-port.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('fail-before-plan-');
let gateway: Server;
let gatewayUrl = '';
const pushes: { path: string; body: string }[] = [];

beforeAll(async () => {
  gateway = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      pushes.push({ path: req.url ?? '', body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});
afterAll(async () => {
  gateway.closeAllConnections();
  await new Promise<void>((resolve) => gateway.close(() => resolve()));
});

describe('a run that fails before its plan', () => {
  it('the service down during the head search: failure metrics pushed, report printed and written, exit 1', async () => {
    const downUrl = `http://127.0.0.1:${await freePort()}/insights/v1`;
    const dest = join(tmp.dir, 'out');
    const file = join(tmp.dir, 'job.yaml');
    await writeFile(
      file,
      stringify({
        name: 'head-down',
        source: { chains: [1] },
        targets: [{ wallet: '0x344940aef33a4e9915b793dfe282f3727eff9869', datasets: ['transactions'] }],
        range: { by: 'block', from: 19_130_000, to: 'latest', chunk: 1000 },
        output: { format: 'ndjson' },
      }),
    );
    pushes.length = 0;
    const r = await runCli([
      'run',
      file,
      '--json',
      '--base-url',
      downUrl,
      '--destination',
      dest,
      '--max-attempts',
      '1',
      '--pushgateway',
      gatewayUrl,
      '--log-level',
      'silent',
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error:/);

    const report = JSON.parse(r.stdout) as RunReport;
    expect(report.status).toBe('failed');
    expect(report.job).toBe('head-down');
    expect(report.error).toMatch(/127\.0\.0\.1/);
    expect(report.windows.planned).toBe(0);

    expect(pushes).toHaveLength(1);
    expect(pushes[0]!.path).toBe('/metrics/job/head-down');
    expect(pushes[0]!.body).toContain('insight_export_run_status{status="failed"} 1');
    expect(pushes[0]!.body).toContain('insight_export_run_status{status="succeeded"} 0');
    expect(pushes[0]!.body).not.toContain('insight_export_last_success_timestamp_seconds');

    expect(report.report_key).toBe(`_state/head-down/reports/${report.run_id}.json`);
    const written = JSON.parse(await readFile(join(dest, report.report_key!), 'utf8')) as RunReport;
    expect(written.status).toBe('failed');
    expect(written.error).toBe(report.error);
    const last = JSON.parse(await readFile(join(dest, '_state/head-down/last-run.json'), 'utf8')) as RunReport;
    expect(last.run_id).toBe(report.run_id);
  });
});
