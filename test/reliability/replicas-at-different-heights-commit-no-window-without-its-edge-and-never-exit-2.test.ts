/**
 * Replicas of the service at different index heights behind one address (the sandbox's
 * `replicaLag`: a request answered by a replica that knows nothing after its height). What the run
 * can prove it does (src/source/bad-answers.ts, src/run/window-proof.ts):
 * - a window is never committed without its edge block: a block the service denies while it served
 *   blocks below and above is asked again, and the window fails (exit 1) when it stays denied;
 * - a run after a consistent one finds no reorganisation that did not happen (a recorded edge the
 *   replica denies is asked again, not taken as replaced), and ends with exit 0 or 1, never 2 (no
 *   "none in or before this job's range");
 * - every row written is one of the source's rows, and once the service is consistent the next run
 *   completes the range.
 * What one answer cannot tell (rows from the lagging replica under an edge the full one resolved)
 * is left to later runs' recounts of committed windows (issue 42 item 2): this file does not claim
 * the first run's files are complete, and says how many rows it lacked.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { runCli } from '../helpers/cli-in-process.js';
import { completedWindows } from '../helpers/completed-windows.js';
import { readTable, truthWalletTransactions } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({ seed: 42, transactions: 20_000 });
const tmp = useTempDir('replicas-');
const LAGGING_UNTIL = Date.UTC(2024, 1, 2, 12) / 1000;

/** A run through the CLI: its exit code and report (--json). */
async function run(jobFile: string): Promise<{ code: number; report: RunReport; stderr: string }> {
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error']);
  return { code: r.code, report: JSON.parse(r.stdout) as RunReport, stderr: r.stderr };
}

/** Every committed window has its edge block; returns how many windows are committed. */
async function expectEveryWindowHasItsEdge(out: string, job: string): Promise<number> {
  const windows = await completedWindows(out, job);
  const without = windows
    .filter((w) => !w.record.edge)
    .map((w) => `${w.record.unit_key} [${w.record.start}, ${w.record.end}) rows ${w.record.rows}`);
  expect(without, 'windows committed without their edge block').toEqual([]);
  return windows.length;
}

describe('replicas at different heights', () => {
  it(
    'block windows: none is committed without its edge, failures exit 1, every row written is a source row; once consistent the next run completes the range',
    { timeout: 180_000 },
    async () => {
      const wallet = sandbox.data.wallets[0]!.address;
      const dir = join(tmp.dir, 'blocks');
      const out = join(dir, 'out');
      const range = { by: 'block' as const, from: 19_135_000, to: 19_150_000 };
      const jobFile = await writeJob(dir, {
        name: 'replicas-blocks',
        source: { base_url: sandbox.url, chains: [1] },
        targets: [{ wallet, datasets: ['transactions'] }],
        range: { ...range, chunk: 500 },
        output: { format: 'ndjson', destination: out, batch_windows: 'off' },
      });
      const truth = new Set(truthWalletTransactions(sandbox.data, wallet, [1], range).map((t) => t.hash));
      sandbox.setInconsistencies({ replicaLag: 0.5, replicaLagUntil: LAGGING_UNTIL });
      let first;
      try {
        first = await run(jobFile);
      } finally {
        sandbox.consistent();
      }
      expect([0, 1], first.stderr).toContain(first.code);
      for (const f of first.report.failed) expect(f.exit_code, f.error).toBe(1);
      expect(sandbox.stats().inconsistencies.replicaLagMissed ?? 0).toBeGreaterThan(0);
      const committed = await expectEveryWindowHasItsEdge(out, 'replicas-blocks');
      expect(committed).toBe(first.report.windows.done);
      // The edges the lagging replica denied were asked again.
      expect(first.report.bad_answers?.edge_not_served ?? 0).toBeGreaterThan(0);
      const written = (await readTable(out, 'transactions', 'ndjson')).map((r) => String(r.hash));
      expect(written.filter((h) => !truth.has(h))).toEqual([]);

      const second = await run(jobFile);
      expect(second.code, second.stderr).toBe(0);
      expect(await expectEveryWindowHasItsEdge(out, 'replicas-blocks')).toBe(30);
      const after = new Set((await readTable(out, 'transactions', 'ndjson')).map((r) => String(r.hash)));
      console.log(
        `[replicas] blocks ${range.from}-${range.to}, chunk 500: first run exit ${first.code}, ${first.report.windows.done} windows committed (each with its edge), ` +
          `${first.report.windows.failed} failed (exit 1), ${first.report.bad_answers?.edge_not_served ?? 0} denied edges asked again; ` +
          `after the next run ${after.size} of ${truth.size} rows (the rest is for the settle recount)`,
      );
    },
  );

  it(
    'a run after a consistent one, against a replica two days behind, finds no reorganisation that did not happen and exits 1, not 2; once consistent, 0',
    { timeout: 180_000 },
    async () => {
      const wallet = sandbox.data.wallets[0]!.address;
      const dir = join(tmp.dir, 'latest');
      const out = join(dir, 'out');
      const jobFile = await writeJob(dir, {
        name: 'replicas-latest',
        source: { base_url: sandbox.url, chains: [1] },
        targets: [{ wallet, datasets: ['transactions'] }],
        range: { from: '2024-02-01', to: 'latest', chunk: '6h' },
        output: { format: 'ndjson', destination: out },
      });
      const consistent = await run(jobFile);
      expect(consistent.code, consistent.stderr).toBe(0);
      const before = await completedWindows(out, 'replicas-latest');

      // Every request now meets the replica two days behind: it denies the blocks the last run ended at.
      sandbox.setInconsistencies({ replicaLag: 1, replicaLagBehindSeconds: 2 * 86_400 });
      let lagging;
      try {
        lagging = await run(jobFile);
      } finally {
        sandbox.consistent();
      }
      expect(lagging.code, lagging.stderr).toBe(1);
      expect(lagging.report.reorgs ?? []).toEqual([]);
      expect(lagging.report.error ?? '').toMatch(/no longer serves block \d+ on chain 1/);
      // Nothing committed before was replaced.
      const kept = await completedWindows(out, 'replicas-latest');
      expect(kept.map((w) => [w.record.unit_key, w.record.start, w.record.run_id])).toEqual(
        before.map((w) => [w.record.unit_key, w.record.start, w.record.run_id]),
      );

      const again = await run(jobFile);
      expect(again.code, again.stderr).toBe(0);
      expect(again.report.reorgs ?? []).toEqual([]);
    },
  );
});
