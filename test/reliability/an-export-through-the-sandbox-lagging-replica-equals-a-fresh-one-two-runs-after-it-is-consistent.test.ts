/**
 * The sandbox's lagging replica (`replicaLag`: a share of the requests, rows, counts and resolve
 * alike, answered by an index that ends on 2024-02-02 at noon, chosen per request behind one port)
 * during a first run, whatever that run does with it (rows left out, windows waiting past the
 * replica's head, or the run refused); then the service is consistent again (`consistent()`), and
 * two runs later the destination holds exactly the rows of a fresh export, every field of every
 * row, and the run after asks the service to count nothing: every window is settled.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { serveReadInterface, type SandboxData, type SandboxServer } from '@insight-export/sandbox';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { listFiles, startRecordingProxy, type RecordingProxy } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('settle-replica-lag-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const LAGS_FROM = Date.parse('2024-02-02T12:00:00Z') / 1000;

let lagging: SandboxServer<SandboxData> | null = null;
let proxy: RecordingProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  await lagging?.close();
  proxy = lagging = null;
});

function job(name: string, baseUrl: string, destination: string) {
  return {
    name,
    source: { base_url: baseUrl, chains: [1, 8453] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
    output: { format: 'ndjson', destination },
  };
}

/** Every row of a local NDJSON export, each as JSON with its keys sorted, sorted. */
function rows(root: string): string[] {
  const out: string[] = [];
  for (const rel of listFiles(root)) {
    if (rel.startsWith('_state/') || rel.startsWith('.insight-export-tmp/')) continue;
    const bytes = readFileSync(join(root, rel));
    for (const line of (rel.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8').split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as Record<string, unknown>;
      out.push(
        JSON.stringify(
          Object.fromEntries(
            Object.keys(row)
              .sort()
              .map((k) => [k, row[k]]),
          ),
        ),
      );
    }
  }
  return out.sort();
}

async function run(jobFile: string): Promise<{ code: number; report: RunReport | null; stderr: string }> {
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error']);
  return { code: r.code, report: r.stdout.trim().startsWith('{') ? (JSON.parse(r.stdout) as RunReport) : null, stderr: r.stderr };
}

describe.each([0.3, 0.5, 0.8])('a replica answering %s of the requests', (rate) => {
  it('two runs after the service is consistent again, the rows equal a fresh export, every field', { timeout: 180_000 }, async () => {
    const fresh = join(tmp.dir, `fresh-${rate}`);
    const freshRun = await run(await writeJob(join(tmp.dir, `fresh-job-${rate}`), job('fresh', sandbox.url, fresh)));
    expect(freshRun.code, freshRun.stderr).toBe(0);
    const want = rows(fresh);

    lagging = await serveReadInterface(sandbox.data, { replicaLag: rate, replicaLagUntil: LAGS_FROM });
    proxy = await startRecordingProxy(lagging.url);
    const out = join(tmp.dir, `out-${rate}`);
    const jobFile = await writeJob(join(tmp.dir, `job-${rate}`), job('lagging', proxy.url, out));
    const first = await run(jobFile);
    const lagged = rows(out);
    lagging.consistent();
    for (let i = 0; i < 2; i++) {
      const r = await run(jobFile);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(rows(out), 'two runs after the service is consistent again').toEqual(want);
    const before = proxy.requests.length;
    const settledRun = await run(jobFile);
    expect(settledRun.code).toBe(0);
    expect(proxy.requests.slice(before).filter((u) => u.searchParams.has('aggregate'))).toEqual([]);
    console.log(
      `[replica-lag ${rate}] first run: exit ${first.code}, ${lagged.length} of ${want.length} rows` +
        ` (${first.report?.windows.done ?? 0} windows committed); two runs later: ${want.length} rows, every field equal; then nothing left to count`,
    );
  });
});
