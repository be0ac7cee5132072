/**
 * `run --workers N` starts N shard processes of the job and merges their reports into one: one
 * summary (or JSON report), one report file beside the state (and `last-run.json`), each worker's
 * line, figures that add up, and one exit code, the most severe of the workers' (a worker whose
 * shard another run holds exits 75, and so does the run). `concurrency.workers` in the job does the same.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { acquireLease, leaseName } from '../../src/state/lease.js';
import { LocalStore } from '../../src/store/local.js';
import { useSandbox } from '../helpers/sandbox.js';
import { listFiles } from '../helpers/export.js';
import { aliceTransactionsJob, readNdjsonExport, runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('run-workers-');

// Windows committed one by one: shards cut a unit's windows anywhere, and batched, each shard's part
// of a day would be a file of its own where one process writes one (compared file by file here).
const job = (destination: string, extra: Record<string, unknown> = {}) => ({
  ...aliceTransactionsJob(sandbox, 'workers', '6h', destination),
  output: { format: 'ndjson', destination, batch_windows: 'off' },
  ...extra,
});

let single: ReturnType<typeof readNdjsonExport>;

beforeAll(async () => {
  const out = join(work.dir, 'single', 'out');
  const r = await runCli(work.cli, ['run', await writeJob(join(work.dir, 'single'), job(out)), '--json']);
  expect(r.code, r.stderr).toBe(0);
  single = readNdjsonExport(out);
}, 120_000);

it('three workers: one merged report and report file, figures adding up, the files of one process', { timeout: 300_000 }, async () => {
  const base = join(work.dir, 'three');
  const out = join(base, 'out');
  const r = await runCli(work.cli, ['run', await writeJob(base, job(out)), '--workers', '3', '--json', '--log-level', 'warn'], {
    timeoutMs: 240_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as RunReport;
  expect(report.status).toBe('succeeded');
  expect(report.shard).toBeNull();
  expect(report.workers!.map((w) => [w.shard, w.exit_code, w.status])).toEqual([
    ['0/3', 0, 'succeeded'],
    ['1/3', 0, 'succeeded'],
    ['2/3', 0, 'succeeded'],
  ]);
  for (const w of report.workers!) expect(w.windows).toBeGreaterThan(0);
  expect(report.rows).toBe(report.workers!.reduce((n, w) => n + w.rows, 0));
  expect(report.rows).toBe(single.itemIds.length);
  expect(report.windows.done).toBe(report.windows.planned);
  expect(report.units_total).toBe(3);
  expect(report.shards!.map((s) => s.windows)).toEqual(report.workers!.map((w) => w.windows));
  // One report file for the run (also last-run.json), beside each worker's own.
  expect(report.report_key).toBe(`_state/workers/reports/${report.run_id}.json`);
  const written = JSON.parse(readFileSync(join(out, report.report_key!), 'utf8')) as RunReport;
  expect(written.run_id).toBe(report.run_id);
  expect((JSON.parse(readFileSync(join(out, '_state/workers/last-run.json'), 'utf8')) as RunReport).run_id).toBe(report.run_id);
  for (const w of report.workers!) expect(readFileSync(join(out, w.report_key!), 'utf8')).toContain(w.run_id!);
  expect(readNdjsonExport(out).files).toEqual(single.files);

  // The summary a person reads: one line per worker.
  const again = await runCli(work.cli, ['run', join(base, 'job.yaml'), '--workers', '3', '--log-level', 'warn'], { timeoutMs: 240_000 });
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toMatch(/^succeeded: job workers -> /);
  for (const s of ['0/3', '1/3', '2/3']) expect(again.stdout).toContain(`worker ${s}: succeeded (exit 0), 0 windows, 0 rows`);
});

it(
  "a worker whose shard another run holds exits 75; the run's exit code is the most severe of its workers'",
  { timeout: 300_000 },
  async () => {
    const base = join(work.dir, 'busy');
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(out, { concurrency: { workers: 2 } }));
    const lease = await acquireLease(new LocalStore(out), 'workers', { runId: 'holder', name: leaseName({ index: 1, count: 2 }) });
    try {
      const r = await runCli(work.cli, ['run', jobFile, '--json', '--log-level', 'warn'], { timeoutMs: 240_000 });
      expect(r.code, r.stderr).toBe(75);
      const report = JSON.parse(r.stdout) as RunReport;
      expect(report.status).toBe('failed');
      expect(report.workers!.map((w) => [w.shard, w.exit_code])).toEqual([
        ['0/2', 0],
        ['1/2', 75],
      ]);
      expect(report.error).toMatch(/^worker 1\/2: /);
      expect(report.rows).toBe(report.workers![0]!.rows);
      expect(report.rows).toBeGreaterThan(0);
    } finally {
      await lease.release();
    }
  },
);

it(
  'SIGTERM stops every worker cleanly (exit 130, the report says interrupted); the next run completes the export exactly',
  { timeout: 300_000 },
  async () => {
    const base = join(work.dir, 'stopped');
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(out));
    const stopped = await runCli(work.cli, ['run', jobFile, '--workers', '2', '--json', '--log-level', 'warn'], {
      timeoutMs: 240_000,
      onSpawn: (child) => {
        // Once the workers have committed a window (their markers appear), stop the run.
        const poll = setInterval(() => {
          if (listFiles(out).some((k) => k.startsWith('_state/workers/completed/'))) {
            clearInterval(poll);
            child.kill('SIGTERM');
          }
        }, 20);
        child.on('close', () => clearInterval(poll));
      },
    });
    expect(stopped.code, stopped.stderr).toBe(130);
    const report = JSON.parse(stopped.stdout) as RunReport;
    expect(report.status).toBe('interrupted');
    // A worker still running is stopped (130, interrupted); one that had already finished its share
    // (a busy machine can let it) ended with 0. The run as a whole is interrupted either way.
    const outcomes = report.workers!.map((w) => `${w.exit_code} ${w.status}`);
    expect(outcomes).toHaveLength(2);
    for (const o of outcomes) expect(['130 interrupted', '0 succeeded']).toContain(o);
    expect(outcomes).toContain('130 interrupted');

    const again = await runCli(work.cli, ['run', jobFile, '--workers', '2', '--json', '--log-level', 'warn'], { timeoutMs: 240_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(readNdjsonExport(out).files).toEqual(single.files);
  },
);
