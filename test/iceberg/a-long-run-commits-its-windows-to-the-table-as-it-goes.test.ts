/**
 * Issue 34: readers of a long back-fill see its windows as they complete. With
 * output.iceberg_commit_interval set, a run commits the tables while it exports, and once more at
 * its end: each snapshot holds whole windows (its rows are exactly its windows' rows, every row of
 * the one before it still there), and the last equals a fresh export. "0s" commits at the end only.
 * A run that exports windows again (--force here; a reorganisation repair the same) commits nothing
 * until all of them are done: readers get the replacement as one snapshot.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { keyOf, readCurrentVersion } from '../../src/iceberg/commit-table.js';
import { destinationUri } from '../../src/iceberg/index.js';
import { decodeWindows, WINDOWS_FILE_PROPERTY } from '../../src/iceberg/snapshot-windows.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob, readTable } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

// Slow answers: the run lasts seconds, several commit intervals.
const sandbox = useSandbox({ seed: 42, transactions: 3_000, latency: { fixedMs: 25, jitterMs: 5 } });
const tmp = useTempDir('iceberg-during-');

const job = {
  name: 'during',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to: '2024-02-03', chunk: '2h' },
  output: { batch_windows: 'off' },
};

const run = (name: string, interval: string, format: 'iceberg' | 'parquet' = 'iceberg', force = false) =>
  exportJob({
    force,
    job,
    dir: join(tmp.dir, name),
    sandbox,
    destination: join(tmp.dir, name, 'out'),
    flags: { format, unitsInFlight: 1, icebergCommitInterval: interval },
  });

it('commits during the run: every snapshot whole windows, the last equal to a fresh export', { timeout: 120_000 }, async () => {
  const report = await run('during', '300ms');
  expect(report.status).toBe('succeeded');
  const commits = report.iceberg_commits!;
  expect(commits.length).toBeGreaterThan(2);
  const store = new LocalStore(join(tmp.dir, 'during', 'out'));
  const current = (await readCurrentVersion(store, 'transactions'))!;
  expect(current.version).toBe(commits.length);
  let before: string[] = [];
  for (const [i, snapshot] of current.meta.snapshots.entries()) {
    if (i > 0) expect(snapshot['parent-snapshot-id']).toBe(current.meta.snapshots[i - 1]!['snapshot-id']);
    const rows = sortedRows(await icebirdRows(store, 'transactions', `v${i + 1}.metadata.json`));
    const windows = decodeWindows((await store.get(keyOf(destinationUri(store), snapshot.summary[WINDOWS_FILE_PROPERTY]!, 'test')))!.body);
    expect(rows.length).toBe(windows.reduce((n, w) => n + w.rows, 0));
    expect(rows).toEqual(expect.arrayContaining(before));
    before = rows;
  }
  await run('fresh', '0s', 'parquet');
  expect(before).toEqual(sortedRows(await readTable(join(tmp.dir, 'fresh', 'out'), 'transactions', 'parquet')));
});

it('"0s" commits at the end of the run only', { timeout: 120_000 }, async () => {
  const report = await run('end-only', '0s');
  expect(report.iceberg_commits).toHaveLength(1);
});

it('a --force run as long is one overwrite snapshot: no commit while windows it replaces are left', { timeout: 120_000 }, async () => {
  const before = (await readCurrentVersion(new LocalStore(join(tmp.dir, 'during', 'out')), 'transactions'))!.version;
  const report = await run('during', '300ms', 'iceberg', true);
  expect(report.status).toBe('succeeded');
  expect(report.duration_s).toBeGreaterThan(1);
  expect(report.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'overwrite' }]);
  expect((await readCurrentVersion(new LocalStore(join(tmp.dir, 'during', 'out')), 'transactions'))!.version).toBe(before + 1);
});
