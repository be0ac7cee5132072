/**
 * Issue 34: fastavro reads every manifest list and manifest of a table's history with the Iceberg
 * v2 spec's Avro schemas (test/iceberg/fixtures/*.avsc, from apache/iceberg format/spec.md): each
 * file's writer schema has every field the spec requires with its field id, type and
 * required-ness, and nothing the spec lacks; a reader with the spec's schema reads every record.
 * The values hold after two appends and a --force overwrite of part of the range: sequence numbers
 * (ADDED entries inherit the manifest's; EXISTING and DELETED entries keep the data and file
 * sequence numbers of the snapshot that added the file), min_sequence_number, added_snapshot_id,
 * the file and row counts per status, the partition summaries (contains_null, lower and upper
 * bounds of chain_id and day), and snapshot ids that agree between the metadata file, the manifest
 * lists' metadata and the entries.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { readCurrentVersion, type TableCommitted } from '../../src/iceberg/index.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob } from '../helpers/export.js';
import { freshExportRows, icebirdRows, readWithSpecSchema, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 41, transactions: 6_000 });
const tmp = useTempDir('iceberg-spec-avro-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TABLES = ['transactions', eventTableForSignature(TRANSFER)];
const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));
const LIST_SCHEMA = fixture('iceberg-v2-manifest-list.avsc');
const MANIFEST_SCHEMA = fixture('iceberg-v2-manifest.avsc');
const STATUS = { existing: 0, added: 1, deleted: 2 };

function job(from: string, to: string) {
  const tokens = sandbox.data.contracts.filter((c) => c.symbol === 'SUSD' && [1, 8453].includes(c.chainId));
  return {
    name: 'specavro',
    source: { base_url: 'sandbox', chains: [1, 8453] },
    targets: [
      { wallet: 'alice.eth', datasets: ['transactions'] },
      ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
    ],
    range: { from, to, chunk: '1d' },
  };
}

const out = () => join(tmp.dir, 'iceberg', 'out');
const commits: TableCommitted[][] = [];

beforeAll(async () => {
  // Two appends (days 1-2, then 3-4), then --force over days 2-4: the first snapshot's manifest
  // keeps day 1 (EXISTING) and loses day 2 (DELETED), the second's loses all its files.
  for (const [from, to, force] of [
    ['2024-02-01', '2024-02-03', false],
    ['2024-02-01', '2024-02-05', false],
    ['2024-02-02', '2024-02-05', true],
  ] as const) {
    const r = await exportJob({
      job: job(from, to),
      dir: join(tmp.dir, 'iceberg'),
      sandbox,
      destination: out(),
      flags: { format: 'iceberg' },
      force,
    });
    expect(r.status).toBe('succeeded');
    commits.push(r.iceberg_commits!);
  }
  const fresh = await freshExportRows({ job: job('2024-02-01', '2024-02-05'), dir: join(tmp.dir, 'fresh'), sandbox }, TABLES);
  for (const table of TABLES) expect(sortedRows(await icebirdRows(new LocalStore(out()), table)), table).toEqual(fresh[table]);
});

const path = (uri: string) => decodeURI(uri.replace(/^file:\/\//, ''));
const long = (b64: string) => Number(Buffer.from(b64, 'base64').readBigInt64LE());
const int = (b64: string) => Buffer.from(b64, 'base64').readInt32LE();

describe.each(TABLES)('table %s after two appends and an overwrite', (table) => {
  it('every manifest list and manifest has the spec schema fields and values', async () => {
    const { meta } = (await readCurrentVersion(new LocalStore(out()), table))!;
    const snapshots = meta.snapshots;
    expect(snapshots.map((s) => s.summary.operation)).toEqual(['append', 'append', 'overwrite']);
    expect(snapshots.map((s) => s['snapshot-id'])).toEqual(commits.map((c) => c.find((t) => t.table === table)!.snapshot_id));
    const bySequence = new Map(snapshots.map((s) => [s['sequence-number'], s['snapshot-id']]));
    const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id'])!;
    const spec = meta['partition-specs'].find((s) => s['spec-id'] === meta['default-spec-id'])!;
    expect(spec.fields.map((f) => f.name)).toEqual(['chain_id', 'block_time_day']);
    /** Per data file: the sequence number and snapshot of the commit that added it. */
    const origin = new Map<string, { sequence: number; snapshot: number }>();
    let existing = 0;
    let deleted = 0;

    for (const [i, snapshot] of snapshots.entries()) {
      const at = `${table} snapshot ${i + 1}`;
      expect(snapshot['sequence-number'], at).toBe(i + 1);
      const listPath = path(snapshot['manifest-list']);
      const list = readWithSpecSchema(LIST_SCHEMA, [listPath])[listPath]!;
      expect(list.problems, at).toEqual([]);
      expect(list.metadata, at).toMatchObject({
        'snapshot-id': String(snapshot['snapshot-id']),
        'parent-snapshot-id': String(snapshot['parent-snapshot-id'] ?? null),
        'sequence-number': String(i + 1),
        'format-version': '2',
      });
      const manifests = readWithSpecSchema(
        MANIFEST_SCHEMA,
        list.records.map((m) => path(m.manifest_path)),
      );
      const live: string[] = [];
      let added = 0;
      let removed = 0;
      for (const m of list.records) {
        const where = `${at} ${m.manifest_path}`;
        const manifest = manifests[path(m.manifest_path)]!;
        expect(manifest.problems, where).toEqual([]);
        expect(manifest.metadata, where).toMatchObject({
          'format-version': '2',
          content: 'data',
          'schema-id': '0',
          'partition-spec-id': '0',
        });
        expect(JSON.parse(manifest.metadata.schema!), where).toEqual(schema);
        expect(JSON.parse(manifest.metadata['partition-spec']!), where).toEqual(spec.fields);
        expect(m, where).toMatchObject({ content: 0, partition_spec_id: spec['spec-id'], key_metadata: null });
        expect(m.manifest_length, where).toBe(statSync(path(m.manifest_path)).size);
        // A manifest is added by the snapshot of its sequence number: this one, or an earlier one it carries over.
        expect(m.sequence_number, where).toBeLessThanOrEqual(snapshot['sequence-number']);
        expect(m.added_snapshot_id, where).toBe(bySequence.get(m.sequence_number));

        const entries = manifest.records;
        const of = (status: number) => entries.filter((e) => e.status === status);
        const rows = (list: typeof entries) => list.reduce((n, e) => n + e.data_file.record_count, 0);
        expect([m.added_files_count, m.existing_files_count, m.deleted_files_count], where).toEqual([
          of(STATUS.added).length,
          of(STATUS.existing).length,
          of(STATUS.deleted).length,
        ]);
        expect([m.added_rows_count, m.existing_rows_count, m.deleted_rows_count], where).toEqual([
          rows(of(STATUS.added)),
          rows(of(STATUS.existing)),
          rows(of(STATUS.deleted)),
        ]);

        const sequences: number[] = [];
        for (const e of entries) {
          const file = e.data_file.file_path as string;
          const df = e.data_file;
          expect(df, file).toMatchObject({ content: 0, file_format: 'PARQUET', key_metadata: null, equality_ids: null });
          expect(df.file_size_in_bytes, file).toBe(statSync(path(file)).size);
          const day = new Date(df.partition.block_time_day * 86_400_000).toISOString().slice(0, 10);
          expect(file).toContain(`/chain_id=${df.partition.chain_id}/date=${day}/`);
          if (e.status === STATUS.added) {
            // Inherited from the manifest (null), or written as the manifest's.
            expect([null, m.sequence_number], file).toContain(e.sequence_number);
            expect([null, m.sequence_number], file).toContain(e.file_sequence_number);
            expect(e.snapshot_id, file).toBe(m.added_snapshot_id);
            const first = origin.get(file) ?? { sequence: m.sequence_number, snapshot: m.added_snapshot_id };
            expect(first, file).toEqual({ sequence: m.sequence_number, snapshot: m.added_snapshot_id });
            origin.set(file, first);
          } else {
            // EXISTING and DELETED entries carry the sequence numbers of the commit that added the file.
            const first = origin.get(file)!;
            expect(first, `${file} was added before`).toBeDefined();
            expect([e.sequence_number, e.file_sequence_number], file).toEqual([first.sequence, first.sequence]);
            expect(e.snapshot_id, file).toBe(e.status === STATUS.existing ? first.snapshot : m.added_snapshot_id);
          }
          const sequence = e.sequence_number ?? m.sequence_number;
          if (e.status !== STATUS.deleted) {
            live.push(file);
            sequences.push(sequence);
          }
          if (m.sequence_number === snapshot['sequence-number']) {
            if (e.status === STATUS.added) added++;
            if (e.status === STATUS.deleted) removed++;
          }
          if (i === snapshots.length - 1 && e.status === STATUS.existing) existing++;
          if (i === snapshots.length - 1 && e.status === STATUS.deleted) deleted++;
        }
        if (sequences.length > 0) expect(m.min_sequence_number, where).toBe(Math.min(...sequences));
        else expect(m.min_sequence_number, where).toBeLessThanOrEqual(m.sequence_number);

        // Partition summaries: one per partition field, over every entry of the manifest.
        expect(m.partitions, where).toHaveLength(spec.fields.length);
        for (const [k, f] of spec.fields.entries()) {
          const values = entries.map((e) => e.data_file.partition[f.name] as number | null);
          const present = values.filter((v): v is number => v !== null);
          const summary = m.partitions[k];
          expect(summary.contains_null, `${where} ${f.name}`).toBe(present.length < values.length);
          expect([null, false], `${where} ${f.name}`).toContain(summary.contains_nan);
          const read = f.name === 'chain_id' ? long : int;
          expect([read(summary.lower_bound), read(summary.upper_bound)], `${where} ${f.name}`).toEqual([
            Math.min(...present),
            Math.max(...present),
          ]);
        }
      }
      expect(new Set(live).size, `${at}: a file live in two manifests`).toBe(live.length);
      expect(String(live.length), at).toBe(snapshot.summary['total-data-files']);
      expect(String(added), at).toBe(snapshot.summary['added-data-files']);
      expect(String(removed), at).toBe(snapshot.summary['deleted-data-files']);
    }
    // The overwrite kept some of the first snapshot's files and deleted others.
    expect(existing, table).toBeGreaterThan(0);
    expect(deleted, table).toBeGreaterThan(0);
  });

  it('a manifest list whose schema departs from the spec is named field by field', async () => {
    const { meta } = (await readCurrentVersion(new LocalStore(out()), table))!;
    const listPath = path(meta.snapshots[0]!['manifest-list']);
    const decoder = new avro.streams.BlockDecoder();
    let writer: { fields: { name: string; type: unknown; 'field-id': number }[] } | undefined;
    // The writer schema as written (field ids included), from the file's header.
    decoder.on(
      'metadata',
      (_type: avro.Type, _codec: string, header: { meta: Record<string, Buffer> }) =>
        (writer = JSON.parse(header.meta['avro.schema']!.toString('utf8')) as typeof writer),
    );
    const records: object[] = [];
    Readable.from([readFileSync(listPath)]).pipe(decoder);
    for await (const r of decoder as AsyncIterable<object>) records.push(r);
    // Another field id for sequence_number, added_files_count made optional, key_metadata as a string, and a field the spec lacks.
    const fields = writer!.fields.map((f) =>
      f.name === 'sequence_number'
        ? { ...f, 'field-id': 999 }
        : f.name === 'added_files_count'
          ? { ...f, type: ['null', 'int'], default: null }
          : f,
    );
    fields.push({ name: 'key_metadata', type: ['null', 'string'], default: null, 'field-id': 519 } as never);
    fields.push({ name: 'extra', type: ['null', 'long'], default: null, 'field-id': 900 } as never);
    const encoder = new avro.streams.BlockEncoder({ ...writer!, fields } as unknown as avro.Schema);
    const chunks: Buffer[] = [];
    const done = new Promise((resolve) => encoder.on('data', (c: Buffer) => chunks.push(c)).on('end', resolve));
    for (const r of records) encoder.write(r);
    encoder.end();
    await done;
    const bad = join(tmp.dir, `departing-${table}.avro`);
    writeFileSync(bad, Buffer.concat(chunks));
    expect(readWithSpecSchema(LIST_SCHEMA, [bad])[bad]!.problems).toEqual([
      'sequence_number: field id 999 where the spec has 515',
      'added_files_count: optional where the spec has it required',
      'key_metadata: type "string" where the spec has "bytes"',
      'extra: not in the spec',
    ]);
  });
});
