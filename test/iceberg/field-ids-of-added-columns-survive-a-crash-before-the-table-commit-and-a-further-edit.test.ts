/**
 * Issue 34.4: the field id of a column added to an Iceberg table is fixed before the first data
 * file with it is written, and a crash between those files and the table commit does not lose it.
 *
 * A daily aggregates table (its columns are the job's expressions): run 1 writes two days; run 2
 * adds an expression and dies before its table commit (its windows committed in the state, the
 * table still at v1: what a crash before the metadata write leaves); the job is then edited again
 * (the added expression moved first, another added, `max` of an int32 column made a `sum`, int64)
 * and run 3 exports two more days. Its commit gives the table one new schema in which run 2's
 * column has the id run 2's files carry, the next column the next id, and the promoted column its
 * old id as a long; icebird reads every part as the Parquet export of that part's job.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readManifests } from '../../src/iceberg/commit-table.js';
import { destinationUri, readCurrentVersion } from '../../src/iceberg/index.js';
import type { RunReport } from '../../src/run/report.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob, listFiles, readTable, type CanonRow } from '../helpers/export.js';
import { fieldIdsWithPyarrow, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 38, transactions: 6_000 });
const tmp = useTempDir('iceberg-evolution-crash-');

const EXPRESSIONS = {
  first: ['count() as txs', 'max(transaction_type) as top_type'],
  crashed: ['count() as txs', 'max(transaction_type) as top_type', 'sum(gas) as gas'],
  edited: ['sum(gas) as gas', 'count() as txs', 'sum(transaction_type) as top_type', 'max(block_number) as last_block'],
};
type Part = keyof typeof EXPRESSIONS;
const RANGES: Record<Part, [string, string]> = {
  first: ['2024-02-01', '2024-02-03'],
  crashed: ['2024-02-03', '2024-02-04'],
  edited: ['2024-02-04', '2024-02-06'],
};

const job = (part: Part) => ({
  name: 'daily',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['aggregates'], tables: { aggregates: 'daily' } }],
  aggregates: { group_by: ['chain_id'], aggregate: EXPRESSIONS[part] },
  range: { from: RANGES[part][0], to: RANGES[part][1], chunk: '1d' },
});

const out = () => join(tmp.dir, 'iceberg', 'out');
const store = () => new LocalStore(out());
const dataFiles = () => listFiles(out()).filter((f) => f.startsWith('daily/') && f.endsWith('.iceberg.parquet'));
const record = () => JSON.parse(readFileSync(join(out(), '_state/daily/tables/daily.json'), 'utf8'));

/** Parquet exports of each part's job over that part's days. */
const parquet = {} as Record<Part, CanonRow[]>;
const files = {} as Record<Part, string[]>;
let recordAfterCrash: { columns: { name: string; field_id: number }[] };
let edited: RunReport;

beforeAll(async () => {
  for (const part of Object.keys(EXPRESSIONS) as Part[]) {
    const dir = join(tmp.dir, `parquet-${part}`);
    const r = await exportJob({ job: job(part), dir, sandbox, destination: join(dir, 'out'), flags: { format: 'parquet' } });
    expect(r.status).toBe('succeeded');
    parquet[part] = await readTable(join(dir, 'out'), 'daily', 'parquet');
    expect(parquet[part].length).toBeGreaterThan(1);
  }

  const dir = join(tmp.dir, 'iceberg');
  // Each part from its own first day: an aggregates unit is its query, so an edited query starts at range.from again.
  const run = (part: Part) => exportJob({ job: job(part), dir, sandbox, destination: out(), flags: { format: 'iceberg' } });
  expect((await run('first')).status).toBe('succeeded');
  files.first = dataFiles();

  expect((await run('crashed')).status).toBe('succeeded');
  // The crash: the table as it was before run 2's metadata file (its manifests stay, unreferenced).
  rmSync(join(out(), 'daily/metadata/v2.metadata.json'));
  writeFileSync(join(out(), 'daily/metadata/version-hint.text'), '1');
  files.crashed = dataFiles().filter((f) => !files.first.includes(f));
  recordAfterCrash = record();

  edited = await run('edited');
  expect(edited.status).toBe('succeeded');
  files.edited = dataFiles().filter((f) => !files.first.includes(f) && !files.crashed.includes(f));
});

describe('a column added by a run that died before its table commit', () => {
  it('has its field id in the table record before the table has it', async () => {
    const ids = Object.fromEntries(recordAfterCrash.columns.map((c) => [c.name, c.field_id]));
    const fixed = ['item_id', 'chain_id', 'window_start', 'window_end', 'window_start_time'];
    expect(ids).toEqual({ ...Object.fromEntries(fixed.map((c, i) => [c, i + 1])), txs: 6, top_type: 7, gas: 8 });
    expect(files.crashed.length).toBeGreaterThan(0);
    expect(fieldIdsWithPyarrow(files.crashed.map((f) => join(out(), f)))).toEqual(
      Object.fromEntries(files.crashed.map((f) => [join(out(), f), ids])),
    );
  });

  it('keeps that id in the schema the next run commits, after a further edit: the new column takes the next id, the promoted one its old id', async () => {
    const { meta, version } = (await readCurrentVersion(store(), 'daily'))!;
    expect(version).toBe(2);
    expect(meta.schemas).toHaveLength(2);
    const field = (s: number, name: string) => meta.schemas[s]!.fields.find((f) => f.name === name);
    expect(meta.schemas[0]!.fields.map((f) => f.name)).not.toContain('gas');
    expect(field(0, 'top_type')).toMatchObject({ id: 7, type: 'int' });
    expect(meta.schemas[1]!.fields.map((f) => [f.name, f.id, f.type]).slice(5)).toEqual([
      ['txs', 6, 'long'],
      ['top_type', 7, 'long'],
      ['gas', 8, 'long'],
      ['last_block', 9, 'long'],
    ]);
    expect(meta['last-column-id']).toBe(9);
    expect(edited.iceberg_commits).toMatchObject([
      { table: 'daily', schema_evolved: { schema_id: 1, added_columns: ['gas', 'last_block'], promoted_columns: ['top_type'] } },
    ]);
    expect(
      record()
        .columns.map((c: { name: string; field_id: number }) => [c.name, c.field_id])
        .slice(5),
    ).toEqual([
      ['txs', 6],
      ['top_type', 7],
      ['gas', 8],
      ['last_block', 9],
    ]);
  });

  it('the current snapshot lists every part, and pyarrow finds the same ids in the files of each', async () => {
    const { meta } = (await readCurrentVersion(store(), 'daily'))!;
    const rootUri = destinationUri(store());
    const listed = (await readManifests(store(), rootUri, meta.snapshots.at(-1)!))
      .flatMap((m) => m.entries)
      .map((e) => decodeURI(e.data_file.file_path.slice(rootUri.length + 1)));
    expect(listed.sort()).toEqual([...files.first, ...files.crashed, ...files.edited].sort());
    const ids = Object.fromEntries(meta.schemas[1]!.fields.map((f) => [f.name, f.id]));
    const pick = (names: string[]) => Object.fromEntries(names.map((n) => [n, ids[n]]));
    const found = fieldIdsWithPyarrow(listed.map((f) => join(out(), f)));
    const base = ['item_id', 'chain_id', 'window_start', 'window_end', 'window_start_time', 'txs', 'top_type'];
    for (const f of files.first) expect(found[join(out(), f)], f).toEqual(pick(base));
    for (const f of files.crashed) expect(found[join(out(), f)], f).toEqual(pick([...base, 'gas']));
    for (const f of files.edited) expect(found[join(out(), f)], f).toEqual(pick([...base, 'gas', 'last_block']));
  });

  it('icebird reads each part as the Parquet export of its job, null where the part had no such column', async () => {
    const all = ['gas', 'last_block'];
    const filled = (rows: CanonRow[]) => rows.map((r) => ({ ...Object.fromEntries(all.map((c) => [c, null])), ...r }));
    const expected = [...filled(parquet.first), ...filled(parquet.crashed), ...filled(parquet.edited)];
    expect(sortedRows(await icebirdRows(store(), 'daily'))).toEqual(sortedRows(expected));
  });
});
