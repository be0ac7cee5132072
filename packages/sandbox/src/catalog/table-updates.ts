/**
 * A commit's updates applied to a table's metadata, as the Apache Iceberg REST catalog protocol
 * describes each TableUpdate (open-api/rest-catalog-open-api.yaml of apache/iceberg at
 * 7f879b11366e17a676a03f15247a821751415529). An id of -1 in set-current-schema,
 * set-default-spec and set-default-sort-order means the last one this commit added.
 */
import { CatalogHttpError } from './catalog-errors.js';
import { maxFieldId, type Json, type TableMetadata } from './table-metadata.js';

/** What one commit's updates remember between updates: the ids they added last. */
interface Added {
  schema?: number;
  spec?: number;
  order?: number;
}

function bad(message: string): CatalogHttpError {
  return new CatalogHttpError(400, 'BadRequestException', message);
}

const nextId = (items: Json[], key: string) => items.reduce((max, s) => Math.max(max, Number(s[key]) + 1), 0);

/** Reuses the id of an equal item (apart from its id), else the next one. */
function addItem(items: Json[], item: Json, key: string): number {
  const { [key]: _ignored, ...rest } = item;
  const same = items.find((s) => {
    const { [key]: _id, ...other } = s;
    return JSON.stringify(other) === JSON.stringify(rest);
  });
  if (same) return Number(same[key]);
  const id = nextId(items, key);
  items.push({ ...rest, [key]: id });
  return id;
}

function pick(id: number, added: number | undefined, what: string): number {
  if (id !== -1) return id;
  if (added === undefined) throw bad(`${what} -1 without an added one in the same commit`);
  return added;
}

function addSnapshot(m: TableMetadata, snapshot: Json): void {
  const id = snapshot['snapshot-id'];
  if (m.snapshots.some((s) => s['snapshot-id'] === id)) throw bad(`snapshot ${String(id)} already exists`);
  const seq = Number(snapshot['sequence-number'] ?? 0);
  if (m['format-version'] >= 2 && seq <= m['last-sequence-number'] && snapshot['parent-snapshot-id'] !== undefined) {
    throw bad(`cannot add snapshot with sequence number ${seq} older than last sequence number ${m['last-sequence-number']}`);
  }
  m.snapshots.push(snapshot);
  m['last-sequence-number'] = Math.max(m['last-sequence-number'], seq);
}

function setSnapshotRef(m: TableMetadata, u: Json, now: number): void {
  const id = u['snapshot-id'] as number;
  const snapshot = m.snapshots.find((s) => s['snapshot-id'] === id);
  if (!snapshot) throw bad(`cannot set ${String(u['ref-name'])} to unknown snapshot ${id}`);
  const { action: _a, 'ref-name': name, ...ref } = u;
  m.refs[name as string] = ref;
  if (name === 'main') {
    m['current-snapshot-id'] = id;
    m['snapshot-log'].push({ 'snapshot-id': id, 'timestamp-ms': Number(snapshot['timestamp-ms'] ?? now) });
  }
}

function removeSnapshots(m: TableMetadata, ids: number[]): void {
  const gone = new Set(ids);
  m.snapshots = m.snapshots.filter((s) => !gone.has(s['snapshot-id'] as number));
  for (const [name, ref] of Object.entries(m.refs)) if (gone.has(ref['snapshot-id'] as number)) delete m.refs[name];
  if (gone.has(m['current-snapshot-id'])) m['current-snapshot-id'] = -1;
  m['snapshot-log'] = m['snapshot-log'].filter((e) => !gone.has(e['snapshot-id'] as number));
}

function removeRef(m: TableMetadata, name: string): void {
  delete m.refs[name];
  if (name === 'main') m['current-snapshot-id'] = -1;
}

function addSchema(m: TableMetadata, u: Json, added: Added): void {
  const schema = u.schema as Json;
  added.schema = addItem(m.schemas, schema, 'schema-id');
  m['last-column-id'] = Math.max(m['last-column-id'], Number(u['last-column-id'] ?? 0), maxFieldId(schema));
}

function addSpec(m: TableMetadata, u: Json, added: Added): void {
  let last = m['last-partition-id'];
  const fields = (((u.spec as Json).fields as Json[] | undefined) ?? []).map((f) => {
    const id = typeof f['field-id'] === 'number' ? f['field-id'] : ++last;
    last = Math.max(last, id);
    return { ...f, 'field-id': id };
  });
  added.spec = addItem(m['partition-specs'], { fields }, 'spec-id');
  m['last-partition-id'] = last;
}

function setCurrentSchema(m: TableMetadata, id: number): void {
  if (!m.schemas.some((s) => s['schema-id'] === id)) throw bad(`cannot set current schema to unknown schema ${id}`);
  m['current-schema-id'] = id;
}

/** Applies one update in place; `added` carries the ids the commit added so far. */
function applyOne(m: TableMetadata, u: Json, added: Added, now: number): void {
  switch (u.action) {
    case 'assign-uuid':
      m['table-uuid'] = u.uuid as string;
      return;
    case 'upgrade-format-version':
      m['format-version'] = Math.max(m['format-version'], Number(u['format-version']));
      return;
    case 'add-schema':
      return addSchema(m, u, added);
    case 'set-current-schema':
      return setCurrentSchema(m, pick(Number(u['schema-id']), added.schema, 'schema-id'));
    case 'add-spec':
      return addSpec(m, u, added);
    case 'set-default-spec':
      m['default-spec-id'] = pick(Number(u['spec-id']), added.spec, 'spec-id');
      return;
    case 'add-sort-order':
      added.order = addItem(m['sort-orders'], u['sort-order'] as Json, 'order-id');
      return;
    case 'set-default-sort-order':
      m['default-sort-order-id'] = pick(Number(u['sort-order-id']), added.order, 'sort-order-id');
      return;
    case 'add-snapshot':
      return addSnapshot(m, u.snapshot as Json);
    case 'set-snapshot-ref':
      return setSnapshotRef(m, u, now);
    case 'remove-snapshots':
      return removeSnapshots(m, u['snapshot-ids'] as number[]);
    case 'remove-snapshot-ref':
      return removeRef(m, u['ref-name'] as string);
    case 'set-location':
      m.location = u.location as string;
      return;
    case 'set-properties':
      Object.assign(m.properties, u.updates as Record<string, string>);
      return;
    case 'remove-properties':
      for (const k of u.removals as string[]) delete m.properties[k];
      return;
    default:
      throw bad(`update ${JSON.stringify(u.action)} is not supported by the sandbox's catalog`);
  }
}

/** The metadata after a commit's updates (the input is not changed). */
export function applyUpdates(current: TableMetadata, updates: Json[], now: number): TableMetadata {
  const m = structuredClone(current);
  const added: Added = {};
  for (const u of updates) applyOne(m, u, added, now);
  m['last-updated-ms'] = now;
  return m;
}
