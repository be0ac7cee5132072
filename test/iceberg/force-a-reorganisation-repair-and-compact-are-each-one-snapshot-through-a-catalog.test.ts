/**
 * Issue 44, done when: through the REST catalog (the sandbox's, every request and answer checked
 * against the spec), `--force` of a day, a reorganisation repair and `compact` are each ONE
 * snapshot (one catalog commit per table), after which the table the catalog serves reads (icebird,
 * at the metadata location the catalog returns) as a fresh Parquet export; the snapshot before it
 * still reads; no metadata file of the exporter's own is written beside the catalog's.
 */
import { basename, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reorganise, type CatalogExchange } from '@insight-export/sandbox';
import { RestCatalogClient, type LoadedTable } from '../../src/iceberg/catalog/index.js';
import type { RunReport } from '../../src/run/report.js';
import type { CompactReport } from '../../src/state/compact.js';
import { LocalStore } from '../../src/store/local.js';
import { restSpec } from '../helpers/catalog-sandbox.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob, readTable } from '../helpers/export.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const exchanges: CatalogExchange[] = [];
const sandbox = useSandbox({ seed: 39, transactions: 2_000, catalog: { onExchange: (e) => exchanges.push(e) } });
afterEach(() => {
  const problems = exchanges.flatMap((e) => restSpec().problems(e));
  exchanges.length = 0;
  expect(problems).toEqual([]);
});
const tmp = useTempDir('iceberg-catalog-one-snapshot-');
const TABLE = 'transactions';

const client = () => new RestCatalogClient({ uri: sandbox.catalog.url, auth: { kind: 'none' } });
const load = (job: string): Promise<LoadedTable> => client().loadTable({ namespace: [job], name: TABLE });
/** The catalog's commits of the table (POSTs to it) since the test began. */
const commitsOf = (job: string) => exchanges.filter((e) => e.method === 'POST' && e.path.endsWith(`/${job}/tables/${TABLE}`));

async function exportTo(job: Record<string, unknown>, dir: string, format: 'iceberg' | 'parquet', force = false): Promise<RunReport> {
  const flags = { format, ...(format === 'iceberg' ? { catalogUri: sandbox.catalog.url } : {}) };
  const r = await exportJob({ job, dir, sandbox, destination: join(dir, 'out'), flags, force });
  expect(r.status).toBe('succeeded');
  return r;
}

const parquet = async (job: Record<string, unknown>, label: string) => {
  await exportTo(job, join(tmp.dir, label), 'parquet');
  return sortedRows(await readTable(join(tmp.dir, label, 'out'), TABLE, 'parquet'));
};

/** The table as icebird reads it at the metadata location the catalog serves (optionally at an older snapshot). */
async function rows(dir: string, job: string, snapshotId?: number): Promise<string[]> {
  const location = (await load(job)).metadataLocation;
  return sortedRows(await icebirdRows(new LocalStore(join(dir, 'out')), TABLE, basename(location), snapshotId));
}

const ownMetadataFiles = async (dir: string) => {
  const found: string[] = [];
  for await (const o of new LocalStore(join(dir, 'out')).list(`${TABLE}/metadata/`, { etags: false }))
    if (/\/v\d+\.metadata\.json$/.test(o.key)) found.push(o.key);
  return found;
};

describe('through the catalog, each is one snapshot', () => {
  it('--force of a day is one overwrite snapshot; the table equals a fresh export, the one before still reads', async () => {
    const job = {
      name: 'catforce',
      source: { base_url: 'sandbox', chains: [1, 8453] },
      targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
      range: { from: '2024-02-02', to: '2024-02-03', chunk: '1d' },
    };
    const dir = join(tmp.dir, 'force');
    const truth = await parquet(job, 'force-truth');
    const first = await exportTo(job, dir, 'iceberg');
    // The table's first commit: its one load answered 404 is handed on to the create (no second GET),
    // then the namespace, the table created, its commit: six requests with the config (seven before).
    expect(exchanges.map((e) => `${e.method} ${e.path.replace(/^.*\/v1\//, '')} ${e.status}`)).toEqual([
      'GET config 200',
      `GET namespaces/catforce/tables/${TABLE} 404`,
      'HEAD namespaces/catforce 404',
      'POST namespaces 200',
      'POST namespaces/catforce/tables 200',
      `POST namespaces/catforce/tables/${TABLE} 200`,
    ]);
    exchanges.length = 0;
    const forced = await exportTo(job, dir, 'iceberg', true);
    expect(forced.iceberg_commits).toMatchObject([{ table: TABLE, operation: 'overwrite' }]);
    expect(commitsOf('catforce').filter((e) => e.status === 200)).toHaveLength(1);
    // The commit loads the table once (the review finding of issue 44: it loaded it twice).
    expect(exchanges.filter((e) => e.method === 'GET' && e.path.endsWith(`/catforce/tables/${TABLE}`))).toHaveLength(1);
    const loaded = await load('catforce');
    expect(loaded.metadata.snapshots!.map((s) => s.summary.operation)).toEqual(['append', 'overwrite']);
    expect(loaded.metadata['current-snapshot-id']).toBe(forced.iceberg_commits![0]!.snapshot_id);
    expect(await rows(dir, 'catforce')).toEqual(truth);
    expect(await rows(dir, 'catforce', first.iceberg_commits![0]!.snapshot_id)).toEqual(truth);
    expect(await ownMetadataFiles(dir)).toEqual([]);
  });

  it('compact is one replace snapshot per table through the catalog (CLI); the table still equals a fresh export', async () => {
    const job = {
      name: 'catcompact',
      source: { base_url: 'sandbox', chains: [1, 8453] },
      targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '2h' },
      output: { batch_windows: 'off' },
    };
    const dir = join(tmp.dir, 'compact');
    const truth = await parquet(job, 'compact-truth');
    await exportTo(job, dir, 'iceberg');
    const before = await load('catcompact');
    exchanges.length = 0;
    const r = await runCli([
      'compact',
      join(dir, 'job.yaml'),
      '--destination',
      join(dir, 'out'),
      '--format',
      'iceberg',
      '--catalog-uri',
      sandbox.catalog.url,
      '--json',
      '--log-level',
      'warn',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as CompactReport;
    expect(report.iceberg_commits).toMatchObject([{ table: TABLE, operation: 'replace', catalog: { namespace: 'catcompact' } }]);
    expect(commitsOf('catcompact').filter((e) => e.status === 200)).toHaveLength(1);
    const after = await load('catcompact');
    const current = after.metadata.snapshots!.at(-1)!;
    expect(current['snapshot-id']).toBe(report.iceberg_commits![0]!.snapshot_id);
    expect(current['parent-snapshot-id']).toBe(before.metadata['current-snapshot-id']);
    expect(current.summary['total-records']).toBe(before.metadata.snapshots!.at(-1)!.summary['total-records']);
    expect(Number(current.summary['added-data-files'])).toBeLessThan(Number(current.summary['deleted-data-files']));
    expect(await rows(dir, 'catcompact')).toEqual(truth);
    expect(await rows(dir, 'catcompact', before.metadata['current-snapshot-id']!)).toEqual(truth);
    expect(await ownMetadataFiles(dir)).toEqual([]);
  });

  // Last: the reorganisation changes the sandbox's chain for the tests after it.
  it('a reorganisation repair is one overwrite snapshot; the table equals a fresh export of the new branch', async () => {
    const senders = [...sandbox.data.transactions(8453)].map((t) => t.from_address).reverse();
    const wallets = [...new Set([sandbox.data.wallet('alice.eth')!.address, ...senders])].slice(0, 4);
    const job = {
      name: 'catreorg',
      source: { base_url: 'sandbox', chains: [1, 8453] },
      targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
      range: { from: '2024-02-03', to: 'latest', safety_lag: '0s', chunk: '6h' },
    };
    const dir = join(tmp.dir, 'reorg');
    const first = await exportTo(job, dir, 'iceberg');
    const oldBranch = await rows(dir, 'catreorg');
    expect(oldBranch).toEqual(await parquet(job, 'reorg-before'));

    reorganise(sandbox.data, 8453, 64);
    exchanges.length = 0;
    const repaired = await exportTo(job, dir, 'iceberg');
    expect(repaired.reorgs!.length).toBeGreaterThan(0);
    expect(repaired.iceberg_commits).toMatchObject([{ table: TABLE, operation: 'overwrite' }]);
    expect(repaired.iceberg_commits![0]!.deleted_files).toBeGreaterThan(0);
    expect(commitsOf('catreorg').filter((e) => e.status === 200)).toHaveLength(1);
    expect((await load('catreorg')).metadata.snapshots).toHaveLength(2);
    const newBranch = await rows(dir, 'catreorg');
    expect(newBranch).toEqual(await parquet(job, 'reorg-after'));
    expect(newBranch).not.toEqual(oldBranch);
    expect(await rows(dir, 'catreorg', first.iceberg_commits![0]!.snapshot_id)).toEqual(oldBranch);
  });
});

beforeAll(() => {
  exchanges.length = 0;
});
