/**
 * What each run recounts, counted on the wire (the `aggregate` requests a proxy sees):
 * - the run after an export recounts every window it committed; a window whose block time is
 *   older than the settle horizon is then settled, and no later run asks about it again;
 * - a window found equal within the horizon (`--settle-horizon 100000d`) waits: the runs after
 *   do not ask about it until its block time is older than the horizon, then one run recounts it
 *   and settles it;
 * - shards recount only the windows they own: two shards together ask about every window once;
 * - `plan` and `run --dry-run` name the windows the next run recounts, and write nothing.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { aliceTransactionsJob, writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('settle-horizon-');
/** alice.eth on three chains over three days, one window per day and chain. */
const WINDOWS = 9;

let proxy: RecordingProxy;
beforeEach(async () => {
  proxy = await startRecordingProxy(sandbox.url);
});
afterEach(async () => {
  await proxy.close();
});

async function exported(name: string): Promise<{ jobFile: string; out: string }> {
  const out = join(tmp.dir, name, 'out');
  const jobFile = await writeJob(join(tmp.dir, name), { ...aliceTransactionsJob(sandbox, name, '1d', out) });
  const first = await run(jobFile);
  expect(first.windows.done).toBe(WINDOWS);
  return { jobFile, out };
}

/** A run through the proxy: its report, and the count requests it sent. */
async function run(jobFile: string, ...flags: string[]): Promise<RunReport & { counts: number }> {
  const before = proxy.requests.length;
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error', '--base-url', proxy.url, ...flags]);
  expect(r.code, r.stderr).toBe(0);
  const counts = proxy.requests.slice(before).filter((u) => u.searchParams.has('aggregate')).length;
  const report = JSON.parse(r.stdout) as RunReport;
  if (report.settle && counts > 0) expect(report.settle.requests).toBe(counts);
  return { ...report, counts };
}

describe('settling', () => {
  it('a window older than the horizon is recounted once, settled, and never asked about again', { timeout: 120_000 }, async () => {
    const { jobFile } = await exported('old');
    const second = await run(jobFile);
    expect(second.settle).toMatchObject({ recounted: WINDOWS, settled: WINDOWS, reexported: 0, pending: 0, waiting: 0 });
    // One count per window for the three chains (and the wallet route's first, ungrouped, for one chain).
    expect(second.counts).toBe(3 + 1);
    for (let i = 0; i < 2; i++) {
      const later = await run(jobFile);
      expect(later.counts, 'count requests of a run after every window settled').toBe(0);
      expect(later.settle).toMatchObject({ recounted: 0, waiting: 0, settled: 0 });
    }
  });

  it('a window equal within the horizon waits, then the first run after the horizon settles it', { timeout: 120_000 }, async () => {
    const { jobFile } = await exported('within');
    const far = ['--settle-horizon', '100000d'];
    const second = await run(jobFile, ...far);
    expect(second.settle).toMatchObject({ recounted: WINDOWS, settled: 0, pending: WINDOWS, waiting: 0 });
    expect(second.counts).toBeGreaterThan(0);
    const third = await run(jobFile, ...far);
    expect(third.counts, 'a window recounted equal within the horizon is not asked again').toBe(0);
    expect(third.settle).toMatchObject({ recounted: 0, waiting: WINDOWS, pending: WINDOWS, settled: 0 });
    // The horizon passed (the default, 1d: the data is of 2024): recounted once more, settled.
    const fourth = await run(jobFile);
    expect(fourth.settle).toMatchObject({ recounted: WINDOWS, settled: WINDOWS, pending: 0, waiting: 0 });
    expect(fourth.counts).toBe(second.counts);
    expect((await run(jobFile)).counts).toBe(0);
  });

  it('two shards recount the windows they own, every window once', { timeout: 120_000 }, async () => {
    const { jobFile } = await exported('shards');
    // What each would recount: disjoint, and together every window.
    const would = [];
    for (const shard of ['0/2', '1/2']) {
      const dry = await run(jobFile, '--shard', shard, '--dry-run');
      would.push(...(dry.settle?.would_recount ?? []).map((w) => `${w.unit}|${w.window[0]}`));
    }
    expect(would).toHaveLength(WINDOWS);
    expect(new Set(would).size).toBe(WINDOWS);
    const shards = [await run(jobFile, '--shard', '0/2'), await run(jobFile, '--shard', '1/2')];
    expect(shards.reduce((n, r) => n + r.settle!.recounted, 0)).toBe(WINDOWS);
    expect(shards.reduce((n, r) => n + r.settle!.settled, 0)).toBe(WINDOWS);
    expect(shards.reduce((n, r) => n + r.counts, 0)).toBeGreaterThan(0);
    const after = await run(jobFile);
    expect(after.counts).toBe(0);
    expect(after.settle!.recounted).toBe(0);
  });

  it('plan and run --dry-run name the windows the next run recounts and write nothing', { timeout: 120_000 }, async () => {
    const { jobFile, out } = await exported('dry');
    const settledBefore = () => readdirSync(join(out, '_state', 'dry')).includes('settled');
    const plan = await runCli(['plan', jobFile, '--json', '--log-level', 'error']);
    expect(plan.code, plan.stderr).toBe(0);
    const planned = JSON.parse(plan.stdout) as { settle: { recount: unknown[]; requests: number; recounted_once: number } };
    expect(planned.settle.recount).toHaveLength(WINDOWS);
    expect(planned.settle.requests).toBe(3 + 1);
    const text = await runCli(['plan', jobFile, '--log-level', 'error']);
    expect(text.stdout).toContain(`the next run recounts ${WINDOWS} windows of earlier runs (about 4 count requests)`);
    const dry = await run(jobFile, '--dry-run');
    expect(dry.counts, 'a dry run sends no count').toBe(0);
    expect(dry.settle!.would_recount).toHaveLength(WINDOWS);
    expect(dry.settle!.would_request).toBe(4);
    expect(settledBefore(), 'a dry run writes no settled record').toBe(false);
    const real = await run(jobFile);
    expect(real.settle!.recounted).toBe(WINDOWS);
    expect(real.counts).toBe(dry.settle!.would_request);
    expect(settledBefore()).toBe(true);
  });
});
