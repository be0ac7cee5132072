/**
 * Windows settle: a run against a load balancer one of whose replicas lags (its index ends on
 * 2024-02-02 at noon; it answers the list routes, the full index answers resolve) commits windows
 * short of rows and exits 0. Once the service is consistent again, the next run recounts those
 * windows (one count per window batch and target), exports again those whose count differs, and
 * the destination is then a fresh export byte for byte; the run after it recounts the windows it
 * exported again and settles them, and later runs ask nothing. No `verify` or `--repair` by hand.
 * By time and by block (a block window's age is its last block's time).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { startLaggingReplica, type LaggingReplica } from '../helpers/lagging-replica.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { readNdjsonExport, writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('settle-lagging-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const LAGS_FROM = Date.parse('2024-02-02T12:00:00Z') / 1000;

let lb: LaggingReplica | null = null;
afterEach(async () => {
  await lb?.close();
  lb = null;
});

/** The first block of chain 1 at or after `time`. */
function blockAt(time: number): number {
  for (const t of sandbox.data.transactions(1)) if (t.block_timestamp >= time) return t.block_number;
  throw new Error(`no block after ${time}`);
}

function job(name: string, baseUrl: string, destination: string, by: 'time' | 'block') {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  const range =
    by === 'time'
      ? { from: '2024-02-01', to: '2024-02-04', chunk: '1d' }
      : { by: 'block', from: blockAt(Date.parse('2024-02-01') / 1000), to: blockAt(Date.parse('2024-02-04') / 1000), chunk: 5_000 };
  return {
    name,
    source: { base_url: baseUrl, chains: by === 'time' ? [1, 8453] : [1] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: susd, chains: [1], events: [TRANSFER] },
    ],
    range,
    output: { format: 'ndjson', destination },
  };
}

async function run(jobFile: string): Promise<RunReport> {
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RunReport;
}

/** The settle figures add up: every window not settled was recounted or waits, and ended one way. */
function addsUp(s: NonNullable<RunReport['settle']>): void {
  expect(s.recounted + s.waiting).toBe(s.settled + s.reexported + s.pending + s.not_provable);
}

const counts = (requests: URL[]) => requests.filter((u) => u.searchParams.has('aggregate')).length;

describe.each(['time', 'block'] as const)('by %s', (by) => {
  it(
    'two runs after the service is consistent again leave exactly a fresh export, without verify or --repair',
    { timeout: 180_000 },
    async () => {
      const fresh = join(tmp.dir, `${by}-fresh`);
      await run(await writeJob(join(tmp.dir, `${by}-fresh-job`), job(`fresh-${by}`, sandbox.url, fresh, by)));
      const want = readNdjsonExport(fresh);

      lb = await startLaggingReplica(sandbox.data, LAGS_FROM);
      const out = join(tmp.dir, `${by}-out`);
      const jobFile = await writeJob(join(tmp.dir, `${by}-job`), job(`lagging-${by}`, lb.url, out, by));
      const first = await run(jobFile);
      expect(first.status).toBe('succeeded');
      // What the issue saw: rows missing, exit 0.
      const short = readNdjsonExport(out);
      expect(short.itemIds.length, 'the lagging replica left rows out').toBeLessThan(want.itemIds.length);

      lb.consistent();
      const second = await run(jobFile);
      expect(readNdjsonExport(out).files, 'after one run on the consistent service').toEqual(want.files);
      const s2 = second.settle!;
      addsUp(s2);
      expect(s2.recounted).toBeGreaterThan(0);
      expect(s2.reexported, 'windows whose count differed').toBeGreaterThan(0);
      expect(s2.settled + s2.reexported).toBe(s2.recounted);
      expect(s2.differed.every((d) => d.files_rows < d.service_rows)).toBe(true);
      // What it wrote is exactly the windows whose count differed (each had rows the files lacked).
      const written = new Set(second.files_written!.map((f) => `${f.unit}|${f.window.join('-')}`));
      expect(written).toEqual(new Set(s2.differed.map((d) => `${d.unit}|${d.window.join('-')}`)));

      // The windows exported again are recounted once more (a new commit), found equal and settled.
      const third = await run(jobFile);
      const s3 = third.settle!;
      addsUp(s3);
      expect(s3.reexported).toBe(0);
      expect(s3.recounted).toBeGreaterThan(0);
      expect(s3.settled).toBe(s3.recounted);
      expect(third.windows.done).toBe(0);
      expect(readNdjsonExport(out).files).toEqual(want.files);

      const before = lb.requests.length;
      const fourth = await run(jobFile);
      expect(fourth.settle!.recounted + fourth.settle!.waiting).toBe(0);
      expect(counts(lb.requests.slice(before)), 'count requests of a run after every window settled').toBe(0);
      const verified = await runCli(['verify', jobFile, '--log-level', 'error']);
      expect(verified.code, verified.stdout).toBe(0);
    },
  );
});
