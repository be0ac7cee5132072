/**
 * Manifests and manifest lists: Avro container files with the Iceberg v2 spec's schemas (field ids
 * in `field-id`), written and read with avsc. Optional data_file fields (column statistics, split
 * offsets) are left out; readers resolve a missing optional field as null.
 */
import { Readable } from 'node:stream';
import avro from 'avsc';
import type { IcebergSchema, PartitionSpec } from './table-schema.js';
import { partitionType } from './table-schema.js';

export const ENTRY_STATUS = { existing: 0, added: 1, deleted: 2 } as const;

export interface DataFile {
  content: number;
  file_path: string;
  file_format: string;
  partition: Record<string, number | null>;
  record_count: number;
  file_size_in_bytes: number;
}

export interface ManifestEntry {
  status: number;
  snapshot_id: number | null;
  sequence_number: number | null;
  file_sequence_number: number | null;
  data_file: DataFile;
}

export interface FieldSummary {
  contains_null: boolean;
  contains_nan: boolean | null;
  lower_bound: Buffer | null;
  upper_bound: Buffer | null;
}

export interface ManifestFile {
  manifest_path: string;
  manifest_length: number;
  partition_spec_id: number;
  content: number;
  sequence_number: number;
  min_sequence_number: number;
  added_snapshot_id: number;
  added_files_count: number;
  existing_files_count: number;
  deleted_files_count: number;
  added_rows_count: number;
  existing_rows_count: number;
  deleted_rows_count: number;
  partitions: FieldSummary[] | null;
}

const optional = (name: string, type: unknown, id: number) => ({ name, type: ['null', type], default: null, 'field-id': id });
const required = (name: string, type: unknown, id: number) => ({ name, type, 'field-id': id });
const record = (name: string, fields: unknown[]) => ({ type: 'record', name, fields });

function manifestEntrySchema(schema: IcebergSchema, spec: PartitionSpec) {
  const partition = record(
    'r102',
    spec.fields.map((f) => optional(f.name, partitionType(schema, f), f['field-id'])),
  );
  const dataFile = record('r2', [
    required('content', 'int', 134),
    required('file_path', 'string', 100),
    required('file_format', 'string', 101),
    required('partition', partition, 102),
    required('record_count', 'long', 103),
    required('file_size_in_bytes', 'long', 104),
  ]);
  return record('manifest_entry', [
    required('status', 'int', 0),
    optional('snapshot_id', 'long', 1),
    optional('sequence_number', 'long', 3),
    optional('file_sequence_number', 'long', 4),
    required('data_file', dataFile, 2),
  ]);
}

const FIELD_SUMMARY = record('r508', [
  required('contains_null', 'boolean', 509),
  optional('contains_nan', 'boolean', 518),
  optional('lower_bound', 'bytes', 510),
  optional('upper_bound', 'bytes', 511),
]);

const MANIFEST_FILE_SCHEMA = record('manifest_file', [
  required('manifest_path', 'string', 500),
  required('manifest_length', 'long', 501),
  required('partition_spec_id', 'int', 502),
  required('content', 'int', 517),
  required('sequence_number', 'long', 515),
  required('min_sequence_number', 'long', 516),
  required('added_snapshot_id', 'long', 503),
  required('added_files_count', 'int', 504),
  required('existing_files_count', 'int', 505),
  required('deleted_files_count', 'int', 506),
  required('added_rows_count', 'long', 512),
  required('existing_rows_count', 'long', 513),
  required('deleted_rows_count', 'long', 514),
  optional('partitions', { type: 'array', 'element-id': 508, items: FIELD_SUMMARY }, 507),
]);

async function encode(schema: object, records: readonly object[], metadata: Record<string, string>): Promise<Buffer> {
  const meta = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v)]));
  // avsc's types leave out the `metadata` option its BlockEncoder takes.
  const encoder = new avro.streams.BlockEncoder(schema as avro.Schema, { codec: 'deflate', metadata: meta } as never);
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    encoder.on('data', (c: Buffer) => chunks.push(c));
    encoder.on('end', resolve);
    encoder.on('error', reject);
  });
  for (const r of records) encoder.write(r);
  encoder.end();
  await done;
  return Buffer.concat(chunks);
}

async function decode<T>(body: Buffer): Promise<T[]> {
  const decoder = new avro.streams.BlockDecoder();
  const out: T[] = [];
  Readable.from([body]).pipe(decoder);
  for await (const record of decoder as AsyncIterable<T>) out.push(record);
  return out;
}

/** A manifest of data files, with the metadata the spec asks of a v2 manifest. */
export function encodeManifest(entries: readonly ManifestEntry[], schema: IcebergSchema, spec: PartitionSpec): Promise<Buffer> {
  return encode(manifestEntrySchema(schema, spec), entries, {
    schema: JSON.stringify(schema),
    'schema-id': String(schema['schema-id']),
    'partition-spec': JSON.stringify(spec.fields),
    'partition-spec-id': String(spec['spec-id']),
    'format-version': '2',
    content: 'data',
  });
}

export function decodeManifest(body: Buffer): Promise<ManifestEntry[]> {
  return decode<ManifestEntry>(body);
}

export function encodeManifestList(
  manifests: readonly ManifestFile[],
  snapshot: { id: number; parent: number | null; sequenceNumber: number },
): Promise<Buffer> {
  return encode(MANIFEST_FILE_SCHEMA, manifests, {
    'snapshot-id': String(snapshot.id),
    'parent-snapshot-id': snapshot.parent === null ? 'null' : String(snapshot.parent),
    'sequence-number': String(snapshot.sequenceNumber),
    'format-version': '2',
  });
}

export function decodeManifestList(body: Buffer): Promise<ManifestFile[]> {
  return decode<ManifestFile>(body);
}

/** The spec's single-value binary form of an int or long partition value (little-endian). */
function boundBytes(value: number, type: 'int' | 'long'): Buffer {
  const b = Buffer.alloc(type === 'int' ? 4 : 8);
  if (type === 'int') b.writeInt32LE(value);
  else b.writeBigInt64LE(BigInt(value));
  return b;
}

/** Per partition field: whether a file has no value, and the lowest and highest value. */
export function partitionSummaries(entries: readonly ManifestEntry[], schema: IcebergSchema, spec: PartitionSpec): FieldSummary[] {
  return spec.fields.map((f) => {
    const values = entries.map((e) => e.data_file.partition[f.name] ?? null);
    const present = values.filter((v): v is number => v !== null);
    const type = partitionType(schema, f);
    return {
      contains_null: present.length < values.length,
      contains_nan: false,
      lower_bound: present.length
        ? boundBytes(
            present.reduce((a, b) => Math.min(a, b)),
            type,
          )
        : null,
      upper_bound: present.length
        ? boundBytes(
            present.reduce((a, b) => Math.max(a, b)),
            type,
          )
        : null,
    };
  });
}
