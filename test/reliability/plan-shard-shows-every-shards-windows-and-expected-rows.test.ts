/**
 * `plan --shard i/N` shows what each shard would export: every shard's windows and, once earlier
 * windows of the units are complete (their rows give each unit's density), its expected rows,
 * balanced between the shards; the windows it lists for shard i are the ones `run --shard i/N`
 * then exports.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Plan, ShardLoad } from '../../src/plan/index.js';
import type { RunReport } from '../../src/run/report.js';
import { useSandbox } from '../helpers/sandbox.js';
import { runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('plan-shard-');

it(
  "plan --shard shows every shard's windows and expected rows, and the run exports the windows it listed",
  { timeout: 300_000 },
  async () => {
    const out = join(work.dir, 'out');
    const jobFile = await writeJob(work.dir, {
      name: 'plan-shard',
      source: { base_url: sandbox.url, chains: [1, 8453, 42161] },
      targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-04', chunk: '3h' },
      output: { format: 'ndjson', destination: out },
    });
    // The first day, so the units have densities.
    const day = await runCli(work.cli, ['run', jobFile, '--to', '2024-02-02', '--json']);
    expect(day.code, day.stderr).toBe(0);

    const planned = await runCli(work.cli, ['plan', jobFile, '--shard', '1/4', '--json']);
    expect(planned.code, planned.stderr).toBe(0);
    const { plan, shards } = JSON.parse(planned.stdout) as { plan: Plan; shards: ShardLoad[] };
    expect(shards.map((s) => s.shard)).toEqual([0, 1, 2, 3]);
    expect(shards.reduce((n, s) => n + s.windows, 0)).toBe(2 * 8 * 3);
    const rows = shards.map((s) => s.expected_rows!);
    for (const n of rows) expect(n).toBeGreaterThan(0);
    const mean = rows.reduce((a, b) => a + b, 0) / rows.length;
    for (const n of rows) expect(n).toBeLessThanOrEqual(2 * mean);
    expect(plan.units).toHaveLength(shards[1]!.windows);

    const text = await runCli(work.cli, ['plan', jobFile, '--shard', '1/4']);
    expect(text.code, text.stderr).toBe(0);
    for (const s of shards) expect(text.stdout).toContain(`shard ${s.shard}/4: ${s.windows} windows, about ${s.expected_rows} rows`);

    const run = await runCli(work.cli, ['run', jobFile, '--shard', '1/4', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as RunReport;
    const listed = new Set(plan.units.map((u) => `${u.unitKey}@${u.window.start}`));
    expect(report.files_written!.length).toBeGreaterThan(0);
    for (const f of report.files_written!) expect(listed.has(`${f.unit}@${f.window[0]}`), f.key).toBe(true);
    expect(report.windows.done).toBe(plan.units.length);
    expect(report.shards!.map((s) => s.expected_rows)).toEqual(rows);
  },
);
