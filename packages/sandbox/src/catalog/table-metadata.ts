/**
 * A table's metadata as the sandbox's Iceberg REST catalog keeps it: made from a create-table
 * request, checked against a commit's requirements and changed by its updates, as the Apache
 * Iceberg REST catalog protocol describes them (open-api/rest-catalog-open-api.yaml of
 * apache/iceberg at 7f879b11366e17a676a03f15247a821751415529: CreateTableRequest,
 * TableRequirement, TableUpdate, TableMetadata; the copy is test/fixtures/iceberg-rest/).
 */
import { randomUUID } from 'node:crypto';
import { CatalogHttpError } from './catalog-errors.js';

/** JSON objects as the protocol sends them (field names with dashes). */
export type Json = Record<string, unknown>;

/** TableMetadata: the fields the sandbox reads are typed, the rest kept as sent. */
export interface TableMetadata extends Json {
  'format-version': number;
  'table-uuid': string;
  location: string;
  'last-sequence-number': number;
  'last-updated-ms': number;
  'last-column-id': number;
  'current-schema-id': number;
  schemas: Json[];
  'default-spec-id': number;
  'partition-specs': Json[];
  'last-partition-id': number;
  'default-sort-order-id': number;
  'sort-orders': Json[];
  properties: Record<string, string>;
  'current-snapshot-id': number;
  refs: Record<string, Json>;
  snapshots: Json[];
  'snapshot-log': Json[];
  'metadata-log': Json[];
}

/** The highest field id of a schema or type, nested fields included. */
export function maxFieldId(type: unknown): number {
  if (typeof type !== 'object' || type === null) return 0;
  const t = type as Json;
  let max = 0;
  for (const key of ['id', 'element-id', 'key-id', 'value-id']) if (typeof t[key] === 'number') max = Math.max(max, t[key]);
  for (const key of ['type', 'element', 'key', 'value']) max = Math.max(max, maxFieldId(t[key]));
  if (Array.isArray(t.fields)) for (const f of t.fields) max = Math.max(max, maxFieldId(f));
  return max;
}

/** Partition fields without a field-id get the next ones from 1000, as Iceberg assigns them. */
function withPartitionFieldIds(spec: Json | undefined, specId: number, lastPartitionId: number): { spec: Json; last: number } {
  let last = lastPartitionId;
  const fields = ((spec?.fields as Json[] | undefined) ?? []).map((f) => {
    const id = typeof f['field-id'] === 'number' ? f['field-id'] : ++last;
    last = Math.max(last, id);
    return { ...f, 'field-id': id };
  });
  return { spec: { 'spec-id': specId, fields }, last };
}

/** The metadata of a new table (createTable), its location given or under the warehouse. */
export function newTableMetadata(req: Json, location: string, now: number): TableMetadata {
  const schema = { ...(req.schema as Json), 'schema-id': 0 };
  const properties = { ...((req.properties as Record<string, string> | undefined) ?? {}) };
  const formatVersion = Number(properties['format-version'] ?? 2);
  if (![1, 2, 3].includes(formatVersion))
    throw new CatalogHttpError(400, 'BadRequestException', `unsupported format-version ${formatVersion}`);
  const { spec, last } = withPartitionFieldIds(req['partition-spec'] as Json | undefined, 0, 999);
  const order = (req['write-order'] as Json | undefined) ?? { 'order-id': 0, fields: [] };
  return {
    'format-version': formatVersion,
    'table-uuid': randomUUID(),
    location,
    'last-sequence-number': 0,
    'last-updated-ms': now,
    'last-column-id': maxFieldId(schema),
    'current-schema-id': 0,
    schemas: [schema],
    'default-spec-id': 0,
    'partition-specs': [spec],
    'last-partition-id': last,
    'default-sort-order-id': Number(order['order-id'] ?? 0),
    'sort-orders': [order],
    properties,
    'current-snapshot-id': -1,
    refs: {},
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
  };
}

/** A blank table for a commit with assert-create: its updates give it a schema, a spec, a location. */
export function blankTableMetadata(location: string, now: number): TableMetadata {
  return {
    ...newTableMetadata({ schema: { type: 'struct', fields: [] } }, location, now),
    schemas: [],
    'partition-specs': [],
    'sort-orders': [],
  };
}

function conflict(message: string): CatalogHttpError {
  return new CatalogHttpError(409, 'CommitFailedException', message);
}

/** The snapshot id a ref points at, or null when the ref does not exist. */
function refSnapshot(m: TableMetadata, ref: string): number | null {
  const r = m.refs[ref];
  return r ? (r['snapshot-id'] as number) : null;
}

/**
 * Checks one requirement against the table as it is now (undefined: the table does not exist);
 * a requirement the table no longer meets is a 409 CommitFailedException, as the spec says.
 */
export function checkRequirement(m: TableMetadata | undefined, req: Json): void {
  const type = req.type as string;
  if (type === 'assert-create') {
    if (m) throw conflict('requirement failed: table already exists');
    return;
  }
  if (!m) throw new CatalogHttpError(404, 'NoSuchTableException', 'table does not exist');
  const expect = (actual: unknown, wanted: unknown, what: string) => {
    if (actual !== wanted) throw conflict(`requirement failed: ${what} changed: expected ${String(wanted)} != ${String(actual)}`);
  };
  switch (type) {
    case 'assert-table-uuid':
      return expect(m['table-uuid'], req.uuid, 'UUID');
    case 'assert-ref-snapshot-id': {
      const ref = req.ref as string;
      const wanted = (req['snapshot-id'] as number | null | undefined) ?? null;
      const actual = refSnapshot(m, ref);
      if (wanted === null && actual !== null) throw conflict(`requirement failed: branch or tag ${ref} was created concurrently`);
      return expect(actual, wanted, `branch or tag ${ref}'s snapshot`);
    }
    case 'assert-current-schema-id':
      return expect(m['current-schema-id'], req['current-schema-id'], 'current schema id');
    case 'assert-last-assigned-field-id':
      return expect(m['last-column-id'], req['last-assigned-field-id'], 'last assigned field id');
    case 'assert-last-assigned-partition-id':
      return expect(m['last-partition-id'], req['last-assigned-partition-id'], 'last assigned partition id');
    case 'assert-default-spec-id':
      return expect(m['default-spec-id'], req['default-spec-id'], 'default partition spec id');
    case 'assert-default-sort-order-id':
      return expect(m['default-sort-order-id'], req['default-sort-order-id'], 'default sort order id');
    default:
      throw new CatalogHttpError(400, 'BadRequestException', `unknown requirement type ${JSON.stringify(type)}`);
  }
}
