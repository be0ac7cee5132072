/**
 * Issue 34: a reorganisation repair is one table operation. After chain 8453 of the sandbox
 * reorganises its last 64 blocks, the next run exports the windows it touched again and commits one
 * overwrite snapshot, after which the table equals a fresh export of the new branch; the snapshot
 * before it still reads whole (the old branch), its files all present.
 */
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import { reorganise } from '@insight-export/sandbox';
import { LocalStore } from '../../src/store/local.js';
import { exportJob, readTable, type CanonRow } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 39, transactions: 8_000 });
const tmp = useTempDir('iceberg-reorg-');
const REORG_CHAIN = 8453;
let wallets: string[];

beforeAll(() => {
  const senders: string[] = [];
  for (const t of sandbox.data.transactions(REORG_CHAIN)) senders.push(t.from_address);
  wallets = [...new Set([sandbox.data.wallet('alice.eth')!.address, ...senders.reverse()])].slice(0, 4);
});

const job = () => ({
  name: 'icereorg',
  source: { base_url: 'sandbox', chains: [1, REORG_CHAIN] },
  targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
  range: { from: '2024-02-03', to: 'latest', safety_lag: '0s', chunk: '6h' },
});

async function freshParquet(label: string): Promise<CanonRow[]> {
  const dir = join(tmp.dir, label);
  expect((await exportJob({ job: job(), dir, sandbox, destination: join(dir, 'out'), flags: { format: 'parquet' } })).status).toBe(
    'succeeded',
  );
  return readTable(join(dir, 'out'), 'transactions', 'parquet');
}

it('a repaired reorganisation is one overwrite snapshot; the table equals a fresh export and the old snapshot still reads', async () => {
  const dir = join(tmp.dir, 'iceberg');
  const store = new LocalStore(join(dir, 'out'));
  const run = () => exportJob({ job: job(), dir, sandbox, destination: join(dir, 'out'), flags: { format: 'iceberg' } });
  expect((await run()).status).toBe('succeeded');
  const oldBranch = sortedRows(await icebirdRows(store, 'transactions'));
  expect(oldBranch).toEqual(sortedRows(await freshParquet('fresh-before')));

  reorganise(sandbox.data, REORG_CHAIN, 64);
  const repaired = await run();
  expect(repaired.status).toBe('succeeded');
  expect(repaired.reorgs!.length).toBeGreaterThan(0);
  expect(repaired.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'overwrite' }]);
  expect(repaired.iceberg_commits![0]!.deleted_files).toBeGreaterThan(0);
  expect((await readCurrentVersion(store, 'transactions'))!.version).toBe(2);

  const newBranch = sortedRows(await icebirdRows(store, 'transactions'));
  expect(newBranch).toEqual(sortedRows(await freshParquet('fresh-after')));
  expect(newBranch).not.toEqual(oldBranch);
  expect(sortedRows(await icebirdRows(store, 'transactions', 'v1.metadata.json'))).toEqual(oldBranch);
});
