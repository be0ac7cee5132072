/**
 * Issue 34: `output.format: iceberg` writes one Iceberg v2 table per dataset table. Independent
 * readers: icebird reads the same rows as the Parquet and the NDJSON exports of the same job
 * (every field);
 * pyarrow finds the Iceberg field ids in every data file; fastavro reads every manifest and
 * manifest list with the spec's required fields, sequence numbers, snapshot ids and partition
 * summaries; the metadata file has the v2 required fields.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { LocalStore } from '../../src/store/local.js';
import type { RunReport } from '../../src/run/report.js';
import { exportJob, listFiles, readTable } from '../helpers/export.js';
import { fieldIdsWithPyarrow, icebirdRows, readWithFastavro, readWithSpecSchema, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 34, transactions: 6_000 });
const tmp = useTempDir('iceberg-export-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TABLES = ['transactions', eventTableForSignature(TRANSFER)];

function job() {
  const tokens = sandbox.data.contracts.filter((c) => c.symbol === 'SUSD' && [1, 8453].includes(c.chainId));
  return {
    name: 'ice',
    source: { base_url: 'sandbox', chains: [1, 8453] },
    targets: [
      { wallet: 'alice.eth', datasets: ['transactions'] },
      ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
    ],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
    decode: true,
  };
}

const root = () => join(tmp.dir, 'iceberg', 'out');
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
let report: RunReport;

beforeAll(async () => {
  for (const format of ['parquet', 'ndjson', 'iceberg'] as const) {
    const dir = join(tmp.dir, format);
    const r = await exportJob({ job: job(), dir, sandbox, destination: join(dir, 'out'), flags: { format } });
    expect(r.status).toBe('succeeded');
    if (format === 'iceberg') report = r;
  }
});

describe.each(TABLES)('table %s exported as iceberg', (table) => {
  it.each(['parquet', 'ndjson'] as const)('icebird reads the rows of the %s export of the same job, every field', async (format) => {
    const other = await readTable(join(tmp.dir, format, 'out'), table, format);
    const iceberg = await icebirdRows(new LocalStore(root()), table);
    expect(other.length).toBeGreaterThan(50);
    expect(Object.keys(iceberg[0]!)).toEqual(Object.keys(other[0]!));
    expect(sortedRows(iceberg)).toEqual(sortedRows(other));
  });

  it('pyarrow finds every column field id of the table schema in every data file', () => {
    const meta = JSON.parse(readFileSync(join(root(), table, 'metadata', 'v1.metadata.json'), 'utf8'));
    const ids = Object.fromEntries(meta.schemas[0].fields.map((f: { name: string; id: number }) => [f.name, f.id]));
    const files = listFiles(root())
      .filter((f) => f.startsWith(`${table}/`) && f.endsWith('.iceberg.parquet'))
      .map((f) => join(root(), f));
    expect(files.length).toBeGreaterThan(1);
    for (const [file, got] of Object.entries(fieldIdsWithPyarrow(files))) expect(got, file).toEqual(ids);
  });

  it('the metadata file has the v2 required fields and names the run in its snapshot summary', () => {
    const meta = JSON.parse(readFileSync(join(root(), table, 'metadata', 'v1.metadata.json'), 'utf8'));
    for (const field of [
      'format-version',
      'table-uuid',
      'location',
      'last-sequence-number',
      'last-updated-ms',
      'last-column-id',
      'schemas',
      'current-schema-id',
      'partition-specs',
      'default-spec-id',
      'last-partition-id',
      'sort-orders',
      'default-sort-order-id',
    ])
      expect(meta, field).toHaveProperty([field]);
    expect(meta['format-version']).toBe(2);
    expect(meta.location).toBe(`file://${root()}/${table}`);
    expect(meta['partition-specs'][0].fields.map((f: { name: string; transform: string }) => `${f.transform}(${f.name})`)).toEqual([
      'identity(chain_id)',
      'day(block_time_day)',
    ]);
    const types = Object.fromEntries(meta.schemas[0].fields.map((f: { name: string; type: string }) => [f.name, f.type]));
    expect(types.block_time).toBe('timestamptz');
    expect(types.chain_id).toBe('long');
    expect(meta.schemas[0].fields.every((f: { doc?: string }) => typeof f.doc === 'string' && f.doc.length > 0)).toBe(true);
    const [snapshot] = meta.snapshots;
    expect(meta['current-snapshot-id']).toBe(snapshot['snapshot-id']);
    expect(snapshot['sequence-number']).toBe(1);
    expect(snapshot.summary).toMatchObject({ operation: 'append', 'insight-export.run-id': report.run_id });
    expect(Number(snapshot.summary['insight-export.run-windows'])).toBeGreaterThan(0);
    expect(report.iceberg_commits?.find((c) => c.table === table)).toMatchObject({
      snapshot_id: snapshot['snapshot-id'],
      metadata_key: `${table}/metadata/v1.metadata.json`,
    });
  });

  it('fastavro reads the manifest list and manifests: required fields, sequence numbers, snapshot ids, partition summaries', () => {
    const meta = JSON.parse(readFileSync(join(root(), table, 'metadata', 'v1.metadata.json'), 'utf8'));
    const snapshot = meta.snapshots[0];
    const path = (uri: string) => decodeURI(uri.replace(/^file:\/\//, ''));
    const list = readWithFastavro([path(snapshot['manifest-list'])])[path(snapshot['manifest-list'])]!;
    expect(list.metadata).toMatchObject({ 'snapshot-id': String(snapshot['snapshot-id']), 'sequence-number': '1', 'format-version': '2' });
    expect(list.fields.map((f) => f['field-id'])).toEqual([500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507]);
    const manifestPaths = list.records.map((m) => path(m.manifest_path as string));
    // Every field the spec's v2 schemas require, with its field id, type and required-ness (test/iceberg/fixtures).
    expect(
      readWithSpecSchema(fixture('iceberg-v2-manifest-list.avsc'), [path(snapshot['manifest-list'])])[path(snapshot['manifest-list'])]!
        .problems,
    ).toEqual([]);
    for (const [file, read] of Object.entries(readWithSpecSchema(fixture('iceberg-v2-manifest.avsc'), manifestPaths)))
      expect(read.problems, file).toEqual([]);
    const manifests = readWithFastavro(manifestPaths);
    let files = 0;
    for (const m of list.records) {
      expect(m).toMatchObject({ content: 0, sequence_number: 1, min_sequence_number: 1, added_snapshot_id: snapshot['snapshot-id'] });
      const manifest = manifests[path(m.manifest_path as string)]!;
      expect(manifest.metadata).toMatchObject({ 'format-version': '2', content: 'data', 'partition-spec-id': '0' });
      expect(JSON.parse(manifest.metadata.schema!)).toEqual(meta.schemas[0]);
      expect(manifest.records).toHaveLength(m.added_files_count as number);
      const chains = new Set<number>();
      for (const e of manifest.records) {
        expect(e).toMatchObject({ status: 1, snapshot_id: snapshot['snapshot-id'] });
        const df = e.data_file as Record<string, any>;
        expect(df).toMatchObject({ content: 0, file_format: 'PARQUET' });
        expect(df.record_count).toBeGreaterThan(0);
        expect(readFileSync(path(df.file_path)).length).toBe(df.file_size_in_bytes);
        const day = new Date(df.partition.block_time_day * 86_400_000).toISOString().slice(0, 10);
        expect(df.file_path).toContain(`/chain_id=${df.partition.chain_id}/date=${day}/`);
        chains.add(df.partition.chain_id);
      }
      const [chainSummary] = m.partitions as { contains_null: boolean; lower_bound: string; upper_bound: string }[];
      expect(chainSummary!.contains_null).toBe(false);
      expect(Number(Buffer.from(chainSummary!.lower_bound, 'base64').readBigInt64LE())).toBe(Math.min(...chains));
      expect(Number(Buffer.from(chainSummary!.upper_bound, 'base64').readBigInt64LE())).toBe(Math.max(...chains));
      files += manifest.records.length;
    }
    expect(String(files)).toBe(snapshot.summary['total-data-files']);
  });
});
