/**
 * Issue 44: two shards of one job (`--shard 0/2` and `--shard 1/2`, each its own CLI process,
 * started together) commit the same tables through one Iceberg REST catalog (the sandbox's) and
 * lose no snapshot, raced both ways round (test/helpers/two-shard-race.ts: `table:1` is a shard's
 * first write of a snapshot's files, after it loaded the table and read the state):
 *
 * - the first round, shard 0 loads the tables (creating them) and reads the state before shard 1
 *   exports anything; shard 1 commits first, so shard 0's commit is answered 409 (its
 *   assert-ref-snapshot-id is stale): it reads the table and the state again and takes none of the
 *   winner's files out;
 * - the second round, shard 1 (holding the whole state) loses: it commits its files on top of the
 *   winner's snapshot.
 *
 * After each round the catalog's current snapshot of each table reads with icebird as a fresh
 * single-process export; afterwards each table's history in the catalog is a chain (each parent
 * the previous, sequence numbers 1..n) of exactly the snapshots the shards reported, each loser's
 * log says its commit was retried, and every request and answer validates against the spec.
 */
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CatalogExchange } from '@insight-export/sandbox';
import { LocalStore } from '../../src/store/local.js';
import { restSpec } from '../helpers/catalog-sandbox.js';
import { freshExportRows, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { expectSnapshotChain, raceTwoShardsBothWays } from '../helpers/two-shard-race.js';
import { ALICE_AND_TRANSFERS_TABLES, aliceAndTransfersIcebergJob, useTestCli } from '../reliability/harness.js';

const exchanges: CatalogExchange[] = [];
const sandbox = useSandbox({ seed: 40, transactions: 4_000, catalog: { onExchange: (e) => exchanges.push(e) } });
const work = useTestCli('catalog-shards-');
const TABLES = ALICE_AND_TRANSFERS_TABLES;
const ROUNDS = ['2024-02-03', '2024-02-04'] as const;
const NS = 'catshards';

// Windows of 6 hours: each round's new span of each stream is split between the two shards.
const plainJob = (to: string, destination: string) => aliceAndTransfersIcebergJob(sandbox, 'catshards', to, '6h', destination);
function job(to: string, destination: string): Record<string, unknown> {
  const j = plainJob(to, destination);
  return { ...j, output: { ...j.output, catalog: { uri: sandbox.catalog.url, namespace: NS } } };
}

const fresh: Record<string, Record<string, string[]>> = {};
beforeAll(async () => {
  for (const to of ROUNDS) {
    const dir = join(work.dir, `fresh-${to}`);
    fresh[to] = await freshExportRows({ job: plainJob(to, join(dir, 'out')), dir }, TABLES);
  }
});

afterAll(() => {
  expect(exchanges.length).toBeGreaterThan(0);
  expect(exchanges.flatMap((e) => restSpec().problems(e))).toEqual([]);
});

const out = () => join(work.dir, 'shards', 'out');

interface CatalogTable {
  'metadata-location': string;
  metadata: {
    'current-snapshot-id'?: number | null;
    snapshots?: { 'snapshot-id': number; 'parent-snapshot-id'?: number; 'sequence-number': number }[];
  };
}

async function loadTable(table: string): Promise<CatalogTable> {
  const res = await fetch(`${sandbox.catalog.url}/v1/namespaces/${NS}/tables/${table}`);
  expect(res.status, table).toBe(200);
  return (await res.json()) as CatalogTable;
}

/** The catalog's current snapshot of each table reads as a fresh export up to `to`. */
async function afterRound(to: string): Promise<void> {
  // The first round's loser was answered 409 (its assert-ref-snapshot-id was stale).
  if (to === ROUNDS[0])
    expect(exchanges.some((e) => e.method === 'POST' && /\/tables\/[^/]+$/.test(e.path) && e.status === 409)).toBe(true);
  for (const table of TABLES) {
    const location = (await loadTable(table))['metadata-location'];
    const rows = await icebirdRows(new LocalStore(out()), table, basename(location));
    expect(sortedRows(rows), `${table} up to ${to}`).toEqual(fresh[to]![table]);
  }
}

it(
  'two shards commit the same tables through one catalog at once, both ways round: no snapshot lost, the 409 retried',
  { timeout: 600_000 },
  async () => {
    const { commits } = await raceTwoShardsBothWays({
      cli: work.cli,
      base: join(work.dir, 'shards'),
      job: (to) => job(to, out()),
      rounds: ROUNDS,
      tables: TABLES.length,
      afterRound,
    });
    for (const table of TABLES) {
      const { metadata } = await loadTable(table);
      expectSnapshotChain(table, metadata.snapshots ?? [], metadata['current-snapshot-id'], commits);
    }
  },
);
