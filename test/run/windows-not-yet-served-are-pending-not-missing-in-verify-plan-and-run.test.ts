/**
 * A fixed range whose `to` lies inside the safety lag of the service's head: the windows the service
 * does not serve yet are pending in `run`, `plan` and `verify` alike, never missing; verify exits 0
 * and proposes no run; every summary counts windows, each once (planned = completed + missing + pending).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import type { VerifyReport } from '../../src/state/verify.js';

const sandbox = useSandbox({});
const tmp = useTempDir('pending-tail-');
const LAG = 64;

describe('a fixed `to` inside the safety lag of the head', () => {
  it('leaves its tail pending, not missing, in run, plan and verify, with counts that add up', { timeout: 120_000 }, async () => {
    const head = sandbox.data.chain(8453)!.headBlock;
    const from = head - (head % 100) - 300;
    const to = head - 10;
    const served = head - LAG + 1;
    const file = join(tmp.dir, 'tail.json');
    await writeFile(
      file,
      JSON.stringify({
        name: 'tail',
        source: { base_url: sandbox.url, chains: [8453] },
        targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
        range: { from, to, chunk: 100 },
        output: { format: 'ndjson', destination: join(tmp.dir, 'out') },
      }),
    );
    // Windows of the grid: [from, +100) x 3, then the one holding `served` and the one holding `to`.
    const planned = Math.ceil(to / 100) - Math.floor(from / 100);
    const pending = Math.ceil(to / 100) - Math.floor(served / 100);

    const first = await runCli(['run', file]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/0\/1 units already complete, 1 waiting for the service/);
    const again = await runCli(['run', file]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/0 done, 0 failed, 0 abandoned of 0 planned; 0\/1 units already complete, 1 waiting for the service/);

    const plan = await runCli(['plan', file]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/: 0 windows to export/);
    expect(plan.stdout).toContain(`to export nothing now; done 1 interval(s); pending blocks [${served}, ${to})`);

    const verify = await runCli(['verify', file]);
    expect(verify.stdout).toContain(
      `windows: ${planned - pending} completed (${planned - pending} intact, 0 damaged), 0 missing, ${pending} pending of ${planned} planned (1 streams)`,
    );
    expect(verify.stdout).toContain(`pending: ${pending} window(s) on chain 8453, blocks [${served}, ${to})`);
    expect(verify.stdout).toContain(`a run exports them once the head reaches block ${to - 1 + LAG}`);
    expect(verify.stdout).not.toMatch(/MISSING|repair every window/);
    expect(verify.code).toBe(0);

    const json = await runCli(['verify', file, '--json']);
    const report = JSON.parse(json.stdout) as VerifyReport;
    const w = report.windows;
    expect(w).toEqual({ planned, completed: planned - pending, missing: 0, pending, damaged: 0 });
    expect(report.units.map((u) => u.windows_completed + u.windows_missing + u.windows_pending)).toEqual([planned]);
    expect(report.pending).toEqual([
      { chain_id: 8453, axis: 'block', windows: pending, range: [served, to], head, exportable_at_head: to - 1 + LAG },
    ]);
    expect(report.ok).toBe(true);
  });

  it('counts a window two runs exported in two parts once', { timeout: 60_000 }, async () => {
    const head = sandbox.data.chain(8453)!.headBlock;
    const from = head - (head % 100) - 1_000;
    const file = join(tmp.dir, 'split.json');
    const job = (to: number) =>
      writeFile(
        file,
        JSON.stringify({
          name: 'split',
          source: { base_url: sandbox.url, chains: [8453] },
          targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
          range: { from, to, chunk: 100 },
          output: { format: 'ndjson', destination: join(tmp.dir, 'split-out') },
        }),
      );
    // The first run ends inside the second window; the next, with `to` moved on, exports its rest.
    await job(from + 150);
    expect((await runCli(['run', file])).code).toBe(0);
    await job(from + 300);
    expect((await runCli(['run', file])).code).toBe(0);
    const verify = await runCli(['verify', file, '--json']);
    expect(verify.code).toBe(0);
    expect((JSON.parse(verify.stdout) as VerifyReport).windows).toEqual({ planned: 3, completed: 3, missing: 0, pending: 0, damaged: 0 });
  });
});
