/**
 * Issue 34: compaction of an Iceberg table whose older data files lack a column of the current
 * schema (written before the column was added) merges them by column name: their rows read null
 * there, the other rows keep their values, the merged file carries the schema's field id of every
 * column, and icebird reads the current snapshot so. The older files are made by hand here: the
 * first windows' files of the closed day rewritten without `wallet_address`.
 */
import { readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { destinationUri, readCurrentVersion, readSnapshotManifests } from '../../src/iceberg/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { jobTables } from '../../src/run/tables.js';
import { parseFileName } from '../../src/sink/file-names.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { compactJob } from '../../src/state/compact.js';
import { LocalStore } from '../../src/store/local.js';
import { duckdb, exportJob, sqlString } from '../helpers/export.js';
import { fieldIdsWithPyarrow, icebirdRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 43, transactions: 3_000 });
const tmp = useTempDir('iceberg-compact-added-column-');
const ADDED = 'wallet_address';
const out = () => join(tmp.dir, 'out');

/** item_id -> the column's value in the files as exported. */
let exported: Map<string, unknown>;
/** item_ids of the rows whose files lack the column. */
const older = new Set<string>();
let fieldIds: Record<string, number>;

beforeAll(async () => {
  const job = {
    name: 'iceadded',
    source: { base_url: 'sandbox', chains: [1] },
    targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '6h' },
    output: { format: 'iceberg', destination: out(), batch_windows: 'off' },
  };
  expect((await exportJob({ job, dir: tmp.dir, sandbox, destination: out() })).status).toBe('succeeded');
  const folder = join(out(), 'transactions', 'chain_id=1', 'date=2024-02-01');
  const files = readdirSync(folder)
    .filter((f) => f.endsWith('.iceberg.parquet'))
    .sort((a, b) => parseFileName(a)!.window.start - parseFileName(b)!.window.start);
  expect(files.length).toBeGreaterThanOrEqual(3);
  const all = files.map((f) => sqlString(join(folder, f))).join(', ');
  exported = new Map((await duckdb(`SELECT item_id, ${ADDED} FROM read_parquet([${all}])`)).map((r) => [String(r.item_id), r[ADDED]]));
  expect([...exported.values()].every((v) => typeof v === 'string' && v !== '')).toBe(true);

  // The first two windows' files as a version without the column wrote them (Parquet with the other field ids).
  const meta = (await readCurrentVersion(new LocalStore(out()), 'transactions'))!.meta;
  fieldIds = Object.fromEntries(meta.schemas[0]!.fields.map((f) => [f.name, f.id]));
  const kept = Object.entries(fieldIds)
    .filter(([name]) => name !== ADDED)
    .map(([name, id]) => `"${name}": ${id}`)
    .join(', ');
  for (const f of files.slice(0, 2)) {
    const path = join(folder, f);
    for (const r of await duckdb(`SELECT item_id FROM read_parquet(${sqlString(path)})`)) older.add(String(r.item_id));
    await duckdb(
      `COPY (SELECT * EXCLUDE (${ADDED}) FROM read_parquet(${sqlString(path)})) TO ${sqlString(`${path}.old`)} (FORMAT parquet, FIELD_IDS {${kept}})`,
    );
    renameSync(`${path}.old`, path);
  }
  expect(older.size).toBeGreaterThan(0);
  expect(older.size).toBeLessThan(exported.size);
});

it('merges files without the column with the others: null there in their rows, every field id in the merged file', async () => {
  const store = new LocalStore(out());
  const report = await compactJob({
    store,
    jobName: 'iceadded',
    targetBytes: 64_000_000,
    maxRows: 1_000_000,
    stagingDir: join(tmp.dir, 'staging'),
    iceberg: { tables: await jobTables(await loadJob(join(tmp.dir, 'job.yaml'))), partitioning: DEFAULT_PARTITIONING },
    logger: silentLogger,
  });
  expect(report.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'replace' }]);

  const current = (await readCurrentVersion(store, 'transactions'))!;
  const root = destinationUri(store);
  const merged = (await readSnapshotManifests(store, root, current.meta))
    .flatMap((m) => m.entries.filter((e) => e.status === 1))
    .map((e) => decodeURI(e.data_file.file_path.slice(root.length + 1)))
    .filter((k) => k.includes('/date=2024-02-01/'));
  expect(merged).toHaveLength(1);
  const path = join(out(), merged[0]!);
  expect(fieldIdsWithPyarrow([path])[path]).toEqual(fieldIds);

  const rows = await duckdb(`SELECT item_id, ${ADDED} FROM read_parquet(${sqlString(path)})`);
  expect(rows.map((r) => String(r.item_id)).sort()).toEqual([...exported.keys()].sort());
  for (const r of rows) expect(r[ADDED], String(r.item_id)).toBe(older.has(String(r.item_id)) ? null : exported.get(String(r.item_id)));

  // Readers of the table see the same.
  const read = (await icebirdRows(store, 'transactions')).filter((r) => exported.has(String(r.item_id)));
  expect(read).toHaveLength(exported.size);
  for (const r of read) expect(r[ADDED], String(r.item_id)).toBe(older.has(String(r.item_id)) ? null : exported.get(String(r.item_id)));
});
