/**
 * Issue 44 item 1: with output.catalog.uri, a run creates its namespace and tables in the REST
 * catalog and commits each snapshot through it (the sandbox's catalog, every request and answer
 * checked against the spec after each test). iceberg-js (written by others) loads every table;
 * icebird reads the rows at the metadata location the catalog returned, equal to a Parquet export;
 * a second run's snapshot is the catalog's current one; a commit the catalog applied but answered
 * 502 leaves exactly one snapshot; a 409 from a concurrent commit is retried.
 */
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventTableForSignature } from '../../src/datasets/events.js';
import type { RunReport } from '../../src/run/report.js';
import { LocalStore } from '../../src/store/local.js';
import { anotherWriterCommitsOnFirstLoad, commitAnswered, icebergJs, useCatalogSandbox } from '../helpers/catalog-sandbox.js';
import { exportJob, readTable } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useTempDir } from '../helpers/temp-dir.js';

const c = useCatalogSandbox({ prefix: 'wh-runs' });
const sandbox = c.sandbox;
const tmp = useTempDir('iceberg-catalog-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TABLES = ['transactions', eventTableForSignature(TRANSFER)];

function job(name: string, to: string) {
  const tokens = sandbox.data.contracts.filter((t) => t.symbol === 'SUSD' && [1, 8453].includes(t.chainId));
  return {
    name,
    source: { base_url: 'sandbox', chains: [1, 8453] },
    targets: [
      { wallet: 'alice.eth', datasets: ['transactions'] },
      ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
    ],
    range: { from: '2024-02-01', to, chunk: '1d' },
    decode: true,
  };
}

const js = () => icebergJs(sandbox, 'wh');

async function run(name: string, to: string, format: 'iceberg' | 'parquet' = 'iceberg'): Promise<RunReport> {
  const dir = join(tmp.dir, name, format);
  const flags = { format, ...(format === 'iceberg' ? { catalogUri: sandbox.catalog.url, catalogWarehouse: 'wh' } : {}) };
  const r = await exportJob({ job: job(name, to), dir, sandbox, destination: join(dir, 'out'), flags });
  expect(r.status).toBe('succeeded');
  return r;
}

describe('a job committed through the catalog', () => {
  let first: RunReport;
  let second: RunReport;
  beforeAll(async () => {
    await run('cat', '2024-02-04', 'parquet');
    first = await run('cat', '2024-02-03');
    second = await run('cat', '2024-02-04');
  });

  it('creates the namespace (the job name) and every table; iceberg-js loads each at the snapshot the report names', async () => {
    expect((await js().listTables({ namespace: ['cat'] })).identifiers.map((i) => i.name).sort()).toEqual([...TABLES].sort());
    for (const table of TABLES) {
      const loaded = await js().loadTable({ namespace: ['cat'], name: table });
      const committed = second.iceberg_commits!.find((x) => x.table === table)!;
      expect(committed.catalog?.namespace).toBe('cat');
      expect(loaded['current-snapshot-id']).toBe(committed.snapshot_id);
      expect(loaded.snapshots).toHaveLength(2);
      expect(loaded.snapshots![1]!['parent-snapshot-id']).toBe(first.iceberg_commits!.find((x) => x.table === table)!.snapshot_id);
    }
  });

  it.each(TABLES)('icebird reads %s at the metadata location the catalog returned, row for row the Parquet export', async (table) => {
    const committed = second.iceberg_commits!.find((x) => x.table === table)!;
    const location = committed.catalog!.metadata_location;
    expect(location).toContain(`/cat/iceberg/out/${table}/metadata/`);
    const iceberg = await icebirdRows(new LocalStore(join(tmp.dir, 'cat', 'iceberg', 'out')), table, basename(location));
    const parquet = await readTable(join(tmp.dir, 'cat', 'parquet', 'out'), table, 'parquet');
    expect(parquet.length).toBeGreaterThan(20);
    expect(sortedRows(iceberg)).toEqual(sortedRows(parquet));
  });

  it('a run with nothing new commits nothing more', async () => {
    const again = await run('cat', '2024-02-04');
    expect(again.iceberg_commits ?? []).toEqual([]);
    for (const table of TABLES) expect((await js().loadTable({ namespace: ['cat'], name: table })).snapshots).toHaveLength(2);
  });
});

describe('lost answers and conflicts', () => {
  it('a commit the catalog applied but answered 502 leaves exactly one snapshot, reported as committed', async () => {
    sandbox.catalog.set({ commitFaults: [502] });
    const r = await run('lost', '2024-02-03');
    // The first table's commit got the 502; every table is reported once, with the one snapshot its table holds.
    expect(r.iceberg_commits!.map((x) => x.table).sort()).toEqual([...TABLES].sort());
    for (const committed of r.iceberg_commits!) {
      const loaded = await js().loadTable({ namespace: ['lost'], name: committed.table });
      expect(loaded.snapshots!.map((s) => s['snapshot-id'])).toEqual([committed.snapshot_id]);
      expect(loaded['current-snapshot-id']).toBe(committed.snapshot_id);
    }
    const later = await run('lost', '2024-02-03');
    expect(later.iceberg_commits ?? []).toEqual([]);
  });

  it('a 409 from a concurrent commit is re-read and retried', async () => {
    await run('race', '2024-02-02');
    const table = TABLES[0]!;
    const id = { namespace: ['race'], name: table };
    // Another writer moves main between the run's load of the table and its commit: the catalog
    // answers 409 to the stale requirement.
    const restore = anotherWriterCommitsOnFirstLoad(c, {
      namespace: 'race',
      table,
      snapshotId: 4242,
      properties: { other: 'writer' },
      warehouse: 'wh',
    });
    const r = await run('race', '2024-02-03');
    restore();
    expect(commitAnswered(c, 'race', table, 409)).toBe(true);
    const loaded = await js().loadTable(id);
    expect(loaded['current-snapshot-id']).toBe(r.iceberg_commits!.find((x) => x.table === table)!.snapshot_id);
    // The report (and the metrics) count the 409 retried.
    expect(r.iceberg_commits!.find((x) => x.table === table)!.catalog!.conflicts).toBe(1);
    expect(loaded.properties.other).toBe('writer');
    const current = loaded.snapshots!.find((x) => x['snapshot-id'] === loaded['current-snapshot-id'])!;
    expect(current['parent-snapshot-id']).toBe(4242);
  });
});
