/**
 * The table metadata file (`metadata/v<N>.metadata.json`) of an Iceberg v2 table: the fields the
 * spec requires of v2, and the next version with one more snapshot.
 */
import { randomUUID } from 'node:crypto';
import { IcebergMetadataError } from './errors.js';
import type { IcebergSchema, PartitionSpec } from './table-schema.js';

export interface Snapshot {
  'snapshot-id': number;
  'parent-snapshot-id'?: number;
  'sequence-number': number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: Record<string, string> & { operation: 'append' | 'replace' | 'overwrite' | 'delete' };
  'schema-id': number;
}

export interface TableMetadata {
  'format-version': 2;
  'table-uuid': string;
  location: string;
  'last-sequence-number': number;
  'last-updated-ms': number;
  'last-column-id': number;
  'current-schema-id': number;
  schemas: IcebergSchema[];
  'default-spec-id': number;
  'partition-specs': PartitionSpec[];
  'last-partition-id': number;
  'default-sort-order-id': number;
  'sort-orders': { 'order-id': number; fields: unknown[] }[];
  properties: Record<string, string>;
  'current-snapshot-id'?: number;
  snapshots: Snapshot[];
  'snapshot-log': { 'snapshot-id': number; 'timestamp-ms': number }[];
  'metadata-log': { 'metadata-file': string; 'timestamp-ms': number }[];
  refs: Record<string, { 'snapshot-id': number; type: 'branch' | 'tag' }>;
}

/** A table with no snapshot yet. */
export function newTable(location: string, schema: IcebergSchema, spec: PartitionSpec, compression: string): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': randomUUID(),
    location,
    'last-sequence-number': 0,
    'last-updated-ms': Date.now(),
    'last-column-id': Math.max(0, ...schema.fields.map((f) => f.id)),
    'current-schema-id': schema['schema-id'],
    schemas: [schema],
    'default-spec-id': spec['spec-id'],
    'partition-specs': [spec],
    // 999 when unpartitioned: the next partition field id is 1000.
    'last-partition-id': Math.max(999, ...spec.fields.map((f) => f['field-id'])),
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: { 'write.format.default': 'parquet', 'write.parquet.compression-codec': compression },
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    refs: {},
  };
}

/** The schema the metadata (at `key`) names current. */
export function currentSchema(meta: TableMetadata, key: string): IcebergSchema {
  const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id']);
  if (!schema) throw new IcebergMetadataError(key, `current-schema-id ${meta['current-schema-id']} is none of its schemas`);
  return schema;
}

export function currentSnapshot(meta: TableMetadata): Snapshot | undefined {
  const id = meta['current-snapshot-id'];
  return id === undefined || id === -1 ? undefined : meta.snapshots.find((s) => s['snapshot-id'] === id);
}

/** The next version of the table: `snapshot` appended and made current; `previousFile` logged (null: the first version). */
export function withSnapshot(meta: TableMetadata, snapshot: Snapshot, previousFile: string | null): TableMetadata {
  return {
    ...meta,
    'last-sequence-number': snapshot['sequence-number'],
    'last-updated-ms': snapshot['timestamp-ms'],
    'current-snapshot-id': snapshot['snapshot-id'],
    snapshots: [...meta.snapshots, snapshot],
    'snapshot-log': [...meta['snapshot-log'], { 'snapshot-id': snapshot['snapshot-id'], 'timestamp-ms': snapshot['timestamp-ms'] }],
    'metadata-log':
      previousFile === null
        ? meta['metadata-log']
        : [...meta['metadata-log'], { 'metadata-file': previousFile, 'timestamp-ms': meta['last-updated-ms'] }],
    refs: { ...meta.refs, main: { 'snapshot-id': snapshot['snapshot-id'], type: 'branch' } },
  };
}

/** A snapshot id: positive, unique in practice, and exact as a JSON number (below 2^53). */
export function newSnapshotId(): number {
  return Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1)) + 1;
}
