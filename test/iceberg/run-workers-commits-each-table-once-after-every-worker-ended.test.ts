/**
 * Issue 34 with `run --workers N`: the workers (shard processes) commit no table; the parent
 * commits each table once after every worker has ended, under its own run id, so a run of N
 * workers is one snapshot, not N racing commits. The table then equals one process's export.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import { currentSnapshot } from '../../src/iceberg/table-metadata.js';
import type { RunReport } from '../../src/run/report.js';
import { LocalStore } from '../../src/store/local.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { aliceTransactionsJob, runCli, useTestCli, writeJob } from '../reliability/harness.js';

const sandbox = useSandbox();
const work = useTestCli('iceberg-workers-');

const job = (destination: string) => ({
  ...aliceTransactionsJob(sandbox, 'iceworkers', '6h', destination),
  output: { format: 'iceberg', destination },
});

let single: string[];

beforeAll(async () => {
  const out = join(work.dir, 'single', 'out');
  const r = await runCli(work.cli, ['run', await writeJob(join(work.dir, 'single'), job(out)), '--json']);
  expect(r.code, r.stderr).toBe(0);
  single = sortedRows(await icebirdRows(new LocalStore(out), 'transactions'));
}, 120_000);

it('three workers: no worker commits, the parent commits the table once, equal to one process', { timeout: 300_000 }, async () => {
  const base = join(work.dir, 'three');
  const out = join(base, 'out');
  const r = await runCli(work.cli, ['run', await writeJob(base, job(out)), '--workers', '3', '--json', '--log-level', 'warn'], {
    timeoutMs: 240_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as RunReport;
  expect(report.status).toBe('succeeded');
  for (const w of report.workers!) {
    expect(w.windows).toBeGreaterThan(0);
    const own = JSON.parse(readFileSync(join(out, w.report_key!), 'utf8')) as RunReport;
    expect(own.iceberg_commits ?? []).toEqual([]);
  }
  expect(report.iceberg_commits).toMatchObject([
    { table: 'transactions', operation: 'append', metadata_key: 'transactions/metadata/v1.metadata.json' },
  ]);
  const store = new LocalStore(out);
  const current = (await readCurrentVersion(store, 'transactions'))!;
  expect(current.version).toBe(1);
  expect(currentSnapshot(current.meta)!.summary['insight-export.run-id']).toBe(report.run_id);
  expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(single);
  // The run's report file (and last-run.json) names the commit.
  const written = JSON.parse(readFileSync(join(out, report.report_key!), 'utf8')) as RunReport;
  expect(written.iceberg_commits).toEqual(report.iceberg_commits);
});
