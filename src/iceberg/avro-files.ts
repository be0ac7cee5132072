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

function manifestEntrySchema(schema: IcebergSchema, spec: PartitionSpec) {
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      { name: 'status', type: 'int', 'field-id': 0 },
      optional('snapshot_id', 'long', 1),
      optional('sequence_number', 'long', 3),
      optional('file_sequence_number', 'long', 4),
      {
        name: 'data_file',
        'field-id': 2,
        type: {
          type: 'record',
          name: 'r2',
          fields: [
            { name: 'content', type: 'int', 'field-id': 134 },
            { name: 'file_path', type: 'string', 'field-id': 100 },
            { name: 'file_format', type: 'string', 'field-id': 101 },
            {
              name: 'partition',
              'field-id': 102,
              type: {
                type: 'record',
                name: 'r102',
                fields: spec.fields.map((f) => optional(f.name, partitionType(schema, f), f['field-id'])),
              },
            },
            { name: 'record_count', type: 'long', 'field-id': 103 },
            { name: 'file_size_in_bytes', type: 'long', 'field-id': 104 },
          ],
        },
      },
    ],
  };
}

const MANIFEST_FILE_SCHEMA = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'manifest_path', type: 'string', 'field-id': 500 },
    { name: 'manifest_length', type: 'long', 'field-id': 501 },
    { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
    { name: 'content', type: 'int', 'field-id': 517 },
    { name: 'sequence_number', type: 'long', 'field-id': 515 },
    { name: 'min_sequence_number', type: 'long', 'field-id': 516 },
    { name: 'added_snapshot_id', type: 'long', 'field-id': 503 },
    { name: 'added_files_count', type: 'int', 'field-id': 504 },
    { name: 'existing_files_count', type: 'int', 'field-id': 505 },
    { name: 'deleted_files_count', type: 'int', 'field-id': 506 },
    { name: 'added_rows_count', type: 'long', 'field-id': 512 },
    { name: 'existing_rows_count', type: 'long', 'field-id': 513 },
    { name: 'deleted_rows_count', type: 'long', 'field-id': 514 },
    optional(
      'partitions',
      {
        type: 'array',
        'element-id': 508,
        items: {
          type: 'record',
          name: 'r508',
          fields: [
            { name: 'contains_null', type: 'boolean', 'field-id': 509 },
            optional('contains_nan', 'boolean', 518),
            optional('lower_bound', 'bytes', 510),
            optional('upper_bound', 'bytes', 511),
          ],
        },
      },
      507,
    ),
  ],
};

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
