/**
 * Issue 34: `compact` rewrites the small files of an Iceberg table's closed days as one `replace`
 * snapshot per table. A job of 6-hour windows each committed on its own (many small files), exported
 * to Iceberg, then compacted: one new snapshot per table, operation replace, the same total
 * records in fewer data files, the merged files with the table's field ids and their rows in the
 * order of the files they replace; icebird reads the current snapshot as a fresh Parquet export of
 * the job (every field) and the previous snapshot as before (its files kept); verify passes; a
 * second compact commits nothing. Locally through the CLI, and on S3 (radosgw).
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { destinationUri, readCurrentVersion, readSnapshotManifests } from '../../src/iceberg/index.js';
import { silentLogger } from '../../src/log.js';
import { parseFileName } from '../../src/sink/file-names.js';
import { compactJob, type CompactReport } from '../../src/state/compact.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { duckdb, exportJob, readTable, sqlString, type CanonRow } from '../helpers/export.js';
import { fieldIdsWithPyarrow, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { loadJob } from '../../src/job/index.js';
import { jobTables } from '../../src/run/tables.js';
import { compactionTables } from '../helpers/iceberg-compaction.js';

const sandbox = useSandbox({ seed: 41, transactions: 4_000 });
const bucket = useTestBucket('iceberg-compact');
const s3Env = useS3CredentialsInEnv();
const tmp = useTempDir('iceberg-compact-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

/** Two tables (transactions, the token's Transfer events) on two chains, 6-hour windows over three days (4 files a day and chain to merge). */
function job(destination: string) {
  const tokens = sandbox.data.contracts.filter((c) => c.symbol === 'SUSD' && [1, 8453].includes(c.chainId));
  return {
    name: 'icecompact',
    source: { base_url: 'sandbox', chains: [1, 8453] },
    targets: [
      { wallet: 'alice.eth', datasets: ['transactions'] },
      ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
    ],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '6h' },
    output: { format: 'iceberg', destination, batch_windows: 'off' },
  };
}

let truth: Map<string, CanonRow[]>;
let tables: string[];

beforeAll(async () => {
  const dir = join(tmp.dir, 'truth');
  const r = await exportJob({ job: job(join(dir, 'out')), dir, sandbox, destination: join(dir, 'out'), flags: { format: 'parquet' } });
  expect(r.status).toBe('succeeded');
  tables = (await jobTables(await loadJob(join(dir, 'job.yaml')))).map((t) => t.name);
  expect(tables).toHaveLength(2);
  truth = new Map(await Promise.all(tables.map(async (t) => [t, await readTable(join(dir, 'out'), t, 'parquet')] as const)));
  for (const rows of truth.values()) expect(rows.length).toBeGreaterThan(20);
});

/** A table's current version and the data files its current snapshot lists (keys), with their records. */
async function tableState(store: ObjectStore, table: string) {
  const current = (await readCurrentVersion(store, table))!;
  const root = destinationUri(store);
  const entries = (await readSnapshotManifests(store, root, current.meta)).flatMap((m) => m.entries.filter((e) => e.status !== 2));
  const keys = entries.map((e) => decodeURI(e.data_file.file_path.slice(root.length + 1)));
  const snapshot = current.meta.snapshots.find((s) => s['snapshot-id'] === current.meta['current-snapshot-id'])!;
  return { current, snapshot, keys, records: entries.reduce((n, e) => n + e.data_file.record_count, 0) };
}

type Before = Map<string, Awaited<ReturnType<typeof tableState>>>;

async function tablesBefore(store: ObjectStore): Promise<Before> {
  return new Map(await Promise.all(tables.map(async (t) => [t, await tableState(store, t)] as const)));
}

/** What every destination must show after the compaction. */
async function expectOneReplaceSnapshotPerTable(store: ObjectStore, before: Before, report: CompactReport): Promise<void> {
  expect(report.iceberg_commits!.map((c) => [c.table, c.operation]).sort()).toEqual(tables.map((t) => [t, 'replace']).sort());
  for (const table of tables) {
    const old = before.get(table)!;
    const now = await tableState(store, table);
    expect(now.current.version, table).toBe(old.current.version + 1);
    expect(now.snapshot['parent-snapshot-id'], table).toBe(old.snapshot['snapshot-id']);
    expect(now.snapshot.summary, table).toMatchObject({
      operation: 'replace',
      'total-records': old.snapshot.summary['total-records'],
      'insight-export.run-id': report.run_id,
    });
    expect(Number(now.snapshot.summary['deleted-records']), table).toBe(Number(now.snapshot.summary['added-records']));
    expect(now.records, table).toBe(old.records);
    expect(now.keys.length, table).toBeLessThan(old.keys.length);
    const added = now.keys.filter((k) => !old.keys.includes(k));
    expect(added.length, table).toBeGreaterThan(0);
    for (const k of added) expect(parseFileName(k)?.runId, k).toBe(report.run_id);

    // Readers: the current snapshot is the job's rows, every field; the previous one reads as before, its files kept.
    expect(sortedRows(await icebirdRows(store, table)), table).toEqual(sortedRows(truth.get(table)!));
    for (const k of old.keys) expect(await store.head(k), k).not.toBeNull();
    expect(sortedRows(await icebirdRows(store, table, `v${old.current.version}.metadata.json`)), table).toEqual(
      sortedRows(truth.get(table)!),
    );
  }
}

describe('a local destination, through the CLI', () => {
  const dir = () => join(tmp.dir, 'local');
  const out = () => join(dir(), 'out');
  const jobFile = () => join(dir(), 'job.yaml');
  let before: Before;
  let report: CompactReport;

  beforeAll(async () => {
    const r = await exportJob({ job: job(out()), dir: dir(), sandbox, destination: out() });
    expect(r.status).toBe('succeeded');
    before = await tablesBefore(new LocalStore(out()));
    const compacted = await runCli(['compact', jobFile(), '--json', '--log-level', 'warn']);
    expect(compacted.stderr).toBe('');
    expect(compacted.code).toBe(0);
    report = JSON.parse(compacted.stdout) as CompactReport;
  });

  it('makes one replace snapshot per table: same records in fewer files, the current and the previous snapshot read whole', async () => {
    expect(report.groups.length).toBeGreaterThanOrEqual(4); // each table, each chain
    await expectOneReplaceSnapshotPerTable(new LocalStore(out()), before, report);
  });

  it('writes the merged files with the field ids of the table schema, their rows in the order of the files they replace', async () => {
    const store = new LocalStore(out());
    for (const table of tables) {
      const now = await tableState(store, table);
      const ids = Object.fromEntries(
        now.current.meta.schemas
          .find((s) => s['schema-id'] === now.current.meta['current-schema-id'])!
          .fields.map((f) => [f.name, f.id] as const),
      );
      const old = before.get(table)!.keys;
      const merged = now.keys.filter((k) => !old.includes(k));
      for (const [file, got] of Object.entries(fieldIdsWithPyarrow(merged.map((k) => join(out(), k))))) expect(got, file).toEqual(ids);
      for (const key of merged) {
        const m = parseFileName(key)!;
        const folder = key.slice(0, key.lastIndexOf('/'));
        const sources = old
          .filter((k) => k.startsWith(`${folder}/`) && !now.keys.includes(k))
          .map((k) => ({ k, p: parseFileName(k)! }))
          .filter(({ p }) => p.target === m.target && p.window.start >= m.window.start && p.window.end <= m.window.end)
          .sort((a, b) => a.p.window.start - b.p.window.start || a.p.seq - b.p.seq);
        expect(sources.length, key).toBeGreaterThan(1);
        const itemIds = async (keys: string[]) =>
          (await duckdb(`SELECT item_id FROM read_parquet([${keys.map((k) => sqlString(join(out(), k))).join(', ')}])`)).map(
            (r) => r.item_id,
          );
        expect(await itemIds([key]), key).toEqual(await itemIds(sources.map((s) => s.k)));
      }
    }
  });

  it('verify passes, and a second compact commits nothing', async () => {
    const verify = await runCli(['verify', jobFile(), '--base-url', sandbox.url, '--json']);
    expect(JSON.parse(verify.stdout).problems).toEqual([]);
    expect(verify.code).toBe(0);

    const versions = await Promise.all(tables.map(async (t) => (await readCurrentVersion(new LocalStore(out()), t))!.version));
    const again = await runCli(['compact', jobFile(), '--json', '--log-level', 'warn']);
    expect(again.code).toBe(0);
    const second = JSON.parse(again.stdout) as CompactReport;
    expect(second.groups).toEqual([]);
    expect(second.iceberg_commits).toEqual([]);
    expect(await Promise.all(tables.map(async (t) => (await readCurrentVersion(new LocalStore(out()), t))!.version))).toEqual(versions);
  });
});

describe('an S3 destination', () => {
  it('makes one replace snapshot per table, and the previous snapshot still reads', async () => {
    const prefix = 'compact';
    const dir = join(tmp.dir, 's3');
    const destination = `s3://${bucket.bucket}/${prefix}`;
    const r = await exportJob({ job: job(destination), dir, sandbox, destination, env: s3Env });
    expect(r.status).toBe('succeeded');
    const store = bucket.store(prefix);
    const before = await tablesBefore(store);
    const report = await compactJob({
      store,
      jobName: 'icecompact',
      targetBytes: 64_000_000,
      maxRows: 1_000_000,
      stagingDir: join(dir, 'staging'),
      tables: await compactionTables(store, join(dir, 'job.yaml')),
      logger: silentLogger,
    });
    await expectOneReplaceSnapshotPerTable(store, before, report);
  });
});
