/**
 * The shapes of the Apache Iceberg REST catalog protocol the exporter sends and reads
 * (open-api/rest-catalog-open-api.yaml of apache/iceberg at
 * 7f879b11366e17a676a03f15247a821751415529; a copy is test/fixtures/iceberg-rest/): the commit
 * requirements and updates are typed, so a commit cannot be sent with a misspelt field.
 */

export interface TableIdentifier {
  namespace: string[];
  name: string;
}

export interface CatalogConfig {
  defaults: Record<string, string>;
  overrides: Record<string, string>;
  endpoints?: string[];
}

export type TableRequirement =
  | { type: 'assert-create' }
  | { type: 'assert-table-uuid'; uuid: string }
  | { type: 'assert-ref-snapshot-id'; ref: string; 'snapshot-id': number | null }
  | { type: 'assert-last-assigned-field-id'; 'last-assigned-field-id': number }
  | { type: 'assert-current-schema-id'; 'current-schema-id': number }
  | { type: 'assert-last-assigned-partition-id'; 'last-assigned-partition-id': number }
  | { type: 'assert-default-spec-id'; 'default-spec-id': number }
  | { type: 'assert-default-sort-order-id'; 'default-sort-order-id': number };

export interface CatalogSchema {
  type: 'struct';
  'schema-id'?: number;
  fields: { id: number; name: string; required: boolean; type: unknown; doc?: string }[];
}

export interface CatalogPartitionSpec {
  'spec-id'?: number;
  fields: { 'source-id': number; 'field-id'?: number; name: string; transform: string }[];
}

export interface CatalogSnapshot {
  'snapshot-id': number;
  'parent-snapshot-id'?: number;
  'sequence-number'?: number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: { operation: 'append' | 'replace' | 'overwrite' | 'delete' } & Record<string, string>;
  'schema-id'?: number;
}

export type TableUpdate =
  | { action: 'assign-uuid'; uuid: string }
  | { action: 'upgrade-format-version'; 'format-version': number }
  | { action: 'add-schema'; schema: CatalogSchema; 'last-column-id'?: number }
  | { action: 'set-current-schema'; 'schema-id': number }
  | { action: 'add-spec'; spec: CatalogPartitionSpec }
  | { action: 'set-default-spec'; 'spec-id': number }
  | { action: 'add-snapshot'; snapshot: CatalogSnapshot }
  | { action: 'set-snapshot-ref'; 'ref-name': string; type: 'branch' | 'tag'; 'snapshot-id': number }
  | { action: 'remove-snapshots'; 'snapshot-ids': number[] }
  | { action: 'remove-snapshot-ref'; 'ref-name': string }
  | { action: 'set-location'; location: string }
  | { action: 'set-properties'; updates: Record<string, string> }
  | { action: 'remove-properties'; removals: string[] };

/** TableMetadata: the fields the exporter reads are typed; the rest is kept as the catalog sent it. */
export interface CatalogTableMetadata {
  'format-version': number;
  'table-uuid': string;
  location?: string;
  'current-schema-id'?: number;
  'last-column-id'?: number;
  schemas?: CatalogSchema[];
  'current-snapshot-id'?: number | null;
  snapshots?: CatalogSnapshot[];
  refs?: Record<string, { type: 'branch' | 'tag'; 'snapshot-id': number }>;
  properties?: Record<string, string>;
  'metadata-log'?: { 'metadata-file': string; 'timestamp-ms': number }[];
  [field: string]: unknown;
}

/** A table as loadTable, createTable and a commit answer it: its metadata and where the catalog wrote it. */
export interface LoadedTable {
  metadataLocation: string;
  metadata: CatalogTableMetadata;
}

export interface CreateTableRequest {
  name: string;
  schema: CatalogSchema;
  location?: string;
  'partition-spec'?: CatalogPartitionSpec;
  properties?: Record<string, string>;
}

/** The snapshot `main` points at (undefined: none yet), as a commit's assert-ref-snapshot-id needs it. */
export function mainSnapshotId(metadata: CatalogTableMetadata): number | null {
  return metadata.refs?.main?.['snapshot-id'] ?? null;
}
