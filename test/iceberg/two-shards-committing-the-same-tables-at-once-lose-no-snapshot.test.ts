/**
 * Issue 34: two concurrent runs on one table lose no snapshot. Two shards of one job (`--shard 0/2`
 * and `--shard 1/2`, each its own CLI process, started together) commit the same tables at their
 * ends, raced both ways round (test/helpers/two-shard-race.ts):
 *
 * - the first round, the shard that read the state before the other shard's windows were
 *   committed loses the race: it reads the table and the state again, finds the winner's snapshot
 *   already lists every file, and takes none of them out;
 * - the second round, the shard holding the whole state loses: it commits its files on top of the
 *   winner's snapshot.
 *
 * After each round the tables read with icebird as a fresh single-process export; afterwards the
 * snapshot history is a chain (each parent the previous, sequence numbers 1..n) holding every
 * snapshot either shard reported, and each loser's log says its commit was retried.
 */
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { freshExportRows, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { expectSnapshotChain, raceTwoShardsBothWays } from '../helpers/two-shard-race.js';
import { ALICE_AND_TRANSFERS_TABLES, aliceAndTransfersIcebergJob, runCli, useTestCli } from '../reliability/harness.js';

const sandbox = useSandbox({ seed: 40, transactions: 4_000 });
const work = useTestCli('iceberg-shards-');
const TABLES = ALICE_AND_TRANSFERS_TABLES;
const ROUNDS = ['2024-02-03', '2024-02-04'] as const;

// Windows of 6 hours: each round's new span of each unit is split between the two shards.
const job = (to: string, destination: string) => aliceAndTransfersIcebergJob(sandbox, 'iceshards', to, '6h', destination);

/** Each round's fresh single-process export, per table. */
const fresh: Record<string, Record<string, string[]>> = {};

beforeAll(async () => {
  for (const to of ROUNDS) {
    const dir = join(work.dir, `fresh-${to}`);
    fresh[to] = await freshExportRows({ job: job(to, join(dir, 'out')), dir }, TABLES);
  }
});

const out = () => join(work.dir, 'shards', 'out');

async function expectTablesEqualAFreshExport(to: string): Promise<void> {
  const store = new LocalStore(out());
  for (const table of TABLES) expect(sortedRows(await icebirdRows(store, table)), `${table} up to ${to}`).toEqual(fresh[to]![table]);
}

it(
  'two shards commit the same tables at once, both ways round: no snapshot and no file lost, retries logged',
  { timeout: 600_000 },
  async () => {
    const { commits, jobFile } = await raceTwoShardsBothWays({
      cli: work.cli,
      base: join(work.dir, 'shards'),
      job: (to) => job(to, out()),
      rounds: ROUNDS,
      tables: TABLES.length,
      afterRound: expectTablesEqualAFreshExport,
    });

    const store = new LocalStore(out());
    for (const table of TABLES) {
      const { meta, version } = (await readCurrentVersion(store, table))!;
      expect(version, table).toBe(meta.snapshots.length);
      expectSnapshotChain(table, meta.snapshots, meta['current-snapshot-id'], commits);
      expect(meta['snapshot-log'].map((l) => l['snapshot-id'])).toEqual(meta.snapshots.map((s) => s['snapshot-id']));
    }
    const verify = await runCli(work.cli, ['verify', jobFile, '--json']);
    expect((JSON.parse(verify.stdout) as VerifyReport).problems).toEqual([]);
    expect(verify.code, verify.stderr).toBe(0);
  },
);
