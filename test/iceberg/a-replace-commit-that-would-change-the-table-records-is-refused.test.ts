/**
 * Issue 34: a commit asked to be a `replace` (compaction's) must keep the table's rows. One that
 * would change the table's record count (here the state lost a window the table still lists) is
 * refused with IcebergReplaceChangesRowsError before anything is written, never labelled
 * otherwise; the same commit without the ask is what it is, a delete.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { commitIcebergTables, IcebergReplaceChangesRowsError, readCurrentVersion } from '../../src/iceberg/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { jobTables } from '../../src/run/tables.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 44, transactions: 2_000 });
const tmp = useTempDir('iceberg-replace-refused-');
const out = () => join(tmp.dir, 'out');

beforeAll(async () => {
  const job = {
    name: 'icerefused',
    source: { base_url: 'sandbox', chains: [1] },
    targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    output: { format: 'iceberg', destination: out() },
  };
  expect((await exportJob({ job, dir: tmp.dir, sandbox, destination: out() })).status).toBe('succeeded');
});

it('refuses a replace commit that would change the records, writes nothing, and commits the change as a delete when not asked', async () => {
  const store = new LocalStore(out());
  const state = new WindowState(store, 'icerefused');
  let dropped: { unit_key: string; start: number; end: number; rows: number } | undefined;
  for await (const rec of state.completedRecords()) if (!dropped && rec.rows > 0) dropped = rec;
  await state.deleteCompleted(dropped!.unit_key, dropped!.start, dropped!.end);

  const tables = await jobTables(await loadJob(join(tmp.dir, 'job.yaml')));
  const commit = (operation?: 'replace') =>
    commitIcebergTables({
      store,
      state: new WindowState(store, 'icerefused'),
      tables,
      partitioning: DEFAULT_PARTITIONING,
      compression: 'zstd',
      runId: 'compact-test',
      operation,
      logger: silentLogger,
    });
  const metadata = () => readdirSync(join(out(), 'transactions', 'metadata')).sort();
  const before = metadata();
  const records = Number((await readCurrentVersion(store, 'transactions'))!.meta.snapshots[0]!.summary['total-records']);

  const refused = await commit('replace').catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(IcebergReplaceChangesRowsError);
  expect((refused as Error).message).toContain(`from ${records} to ${records - dropped!.rows}`);
  expect(metadata()).toEqual(before);

  expect(await commit()).toMatchObject([{ table: 'transactions', operation: 'delete', added_files: 0 }]);
});
