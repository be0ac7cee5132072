/**
 * Issue 34: a crash at any write of a table's commit (each manifest, the manifest list, the
 * snapshot's windows file, the metadata file, the version hint; before or after the write) leaves a table whose current
 * snapshot reads whole: the previous one or the new one, never part of a window. The next run
 * then makes the table equal the state exactly, in at most one more snapshot.
 *
 * The starting point is what a run leaves when it dies after committing its windows and before
 * its table commit: the state of two runs, the table of the first (v1).
 */
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { commitIcebergTables, readCurrentVersion } from '../../src/iceberg/index.js';
import { jobTables } from '../../src/run/tables.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { Crash, crashingStore } from '../helpers/crashing-store.js';
import { exportJob, type CanonRow } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 36, transactions: 4_000 });
const tmp = useTempDir('iceberg-crash-');

const job = (to: string) => ({
  name: 'crash',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to, chunk: '1d' },
});

/** Where every trial runs: table metadata addresses files by absolute path, so a table is restored in place, not copied elsewhere. */
let work: string;
let base: string;
let first: CanonRow[];
let all: CanonRow[];
let tables: Awaited<ReturnType<typeof jobTables>>;

const run = () => exportJob({ job: job('2024-02-05'), dir: work, sandbox, destination: join(work, 'out'), flags: { format: 'iceberg' } });

/** The destination as the base has it, at `work`. */
function restore(): LocalStore {
  rmSync(work, { recursive: true, force: true });
  cpSync(base, work, { recursive: true });
  return new LocalStore(join(work, 'out'));
}

beforeAll(async () => {
  work = join(tmp.dir, 'work');
  base = join(tmp.dir, 'base');
  const out = join(work, 'out');
  const one = await exportJob({ job: job('2024-02-03'), dir: work, sandbox, destination: out, flags: { format: 'iceberg' } });
  expect(one.status).toBe('succeeded');
  first = await icebirdRows(new LocalStore(out), 'transactions');
  const v1 = join(tmp.dir, 'v1-metadata');
  cpSync(join(out, 'transactions', 'metadata'), v1, { recursive: true });
  expect((await run()).iceberg_commits).toHaveLength(1);
  all = await icebirdRows(new LocalStore(out), 'transactions');
  expect(all.length).toBeGreaterThan(first.length);
  // The table as the first run left it, the state as the second run left it.
  rmSync(join(out, 'transactions', 'metadata'), { recursive: true });
  cpSync(v1, join(out, 'transactions', 'metadata'), { recursive: true });
  cpSync(work, base, { recursive: true });
  tables = await jobTables(await loadJob(join(work, 'job.yaml')));
});

const commit = (store: ObjectStore) =>
  commitIcebergTables({
    store,
    state: new WindowState(store, 'crash'),
    tables,
    partitioning: '{dataset}/chain_id={chain_id}/date={date}',
    compression: 'zstd',
    runId: 'trial',
    logger: silentLogger,
  });

/** The writes of a whole commit from the base. */
async function writesOfACommit(): Promise<number> {
  const store = crashingStore(restore(), Number.MAX_SAFE_INTEGER, false);
  expect(await commit(store)).toHaveLength(1);
  return store.writes;
}

describe('a table commit crashed at each of its writes', () => {
  it('leaves a whole snapshot current, and the next run makes the table equal the state', async () => {
    const writes = await writesOfACommit();
    // A manifest of the added files, the snapshot's windows file, the manifest list, the metadata file, the hint.
    expect(writes).toBe(5);
    for (let budget = 0; budget < writes; budget++) {
      for (const after of [false, true]) {
        const name = `crash at write ${budget + 1}, ${after ? 'after' : 'before'} it`;
        const out = restore();
        await expect(commit(crashingStore(out, budget, after)), name).rejects.toThrow(Crash);

        const current = (await readCurrentVersion(out, 'transactions'))!;
        const rows = sortedRows(await icebirdRows(out, 'transactions', `v${current.version}.metadata.json`));
        expect(rows, name).toEqual(sortedRows(current.version === 1 ? first : all));
        const hinted = sortedRows(await icebirdRows(out, 'transactions'));
        expect([sortedRows(first), sortedRows(all)], name).toContainEqual(hinted);

        const report = await run();
        expect(report.status, name).toBe('succeeded');
        expect(report.iceberg_commits!.length, name).toBe(current.version === 1 ? 1 : 0);
        expect((await readCurrentVersion(out, 'transactions'))!.version, name).toBe(2);
        expect(sortedRows(await icebirdRows(out, 'transactions')), name).toEqual(sortedRows(all));
      }
    }
  });
});
