/**
 * One commit of an Iceberg table through a REST catalog (output.catalog.uri): the same steps as a
 * commit without one (commit-table.ts: the table's snapshot made to list exactly the state's live
 * files, its manifests and manifest list written under the destination), but the table is loaded
 * from the catalog (created there when missing, with the job's schema, field ids and partition
 * spec, located under the destination) and the commit point is the catalog's commit, with the
 * requirements assert-table-uuid and assert-ref-snapshot-id on main.
 *
 * A 409 re-reads the table and the state and tries again, as a lost race does without a catalog.
 * A 5xx or a lost answer ("state unknown") re-loads the table: the snapshot landed when the table
 * holds it (it is reported as committed); else the commit is tried again, and the next attempt
 * commits nothing when the table already lists the state's files and windows (their digest in
 * the snapshot's summary), so the same windows are never committed twice.
 */
import type { Logger } from '../log.js';
import {
  CatalogCommitConflictError,
  CatalogNotFoundError,
  CatalogRequestError,
  CommitStateUnknownError,
  mainSnapshotId,
  type LoadedTable,
  type RestCatalogClient,
  type TableIdentifier,
  type TableRequirement,
  type TableUpdate,
} from './catalog/index.js';
import {
  changeOf,
  retryingConflicts,
  withJobSchema,
  writeSnapshotFiles,
  type CommitBase,
  type TableCommitInput,
  type TableCommitted,
} from './commit-table.js';
import { readSnapshotManifests } from './snapshot-manifests.js';
import { currentSchema, currentSnapshot, type Snapshot, type TableMetadata } from './table-metadata.js';
import { partitionSpec, tableSchema } from './table-schema.js';

/** The catalog a job's tables are committed through, and the namespace that holds them. */
export interface TableCatalog {
  client: RestCatalogClient;
  namespace: string[];
}

/** Namespaces made sure of, per client: created once per process at most. */
const namespacesReady = new WeakMap<RestCatalogClient, Map<string, Promise<void>>>();

/**
 * Makes the table list exactly the contents through the catalog; null when it already does.
 * `loaded`: the table as loaded to decide what `contents` is asked at (catalogTable), taken by the
 * first attempt instead of loading it again (one load per attempt), null when that load found no
 * table (the first attempt creates it without asking again); a later attempt loads anew.
 */
export async function commitThroughCatalog(
  t: TableCommitInput,
  catalog: TableCatalog,
  loaded?: LoadedTable | null,
): Promise<TableCommitted | null> {
  const id = { namespace: catalog.namespace, name: t.table };
  let first = loaded;
  const result = await retryingConflicts(t.table, t.logger, () => {
    const taken = first;
    first = undefined;
    return tryCatalogCommit(t, catalog, id, taken);
  });
  if (result?.schema_evolved)
    t.logger.info({ table: t.table, ...result.schema_evolved }, 'Iceberg table schema evolved: older rows read null in the added columns');
  return result;
}

/** The table as the catalog serves it (null: no table yet); the snapshot main points at is what `contents` is asked at. */
export async function catalogTable(catalog: TableCatalog, table: string): Promise<LoadedTable | null> {
  try {
    return await catalog.client.loadTable({ namespace: catalog.namespace, name: table });
  } catch (err) {
    if (err instanceof CatalogNotFoundError) return null;
    throw err;
  }
}

/** The snapshot main points at (0: none, or no table yet): what `contents` is asked at. */
export const catalogTableVersion = (loaded: LoadedTable | null): number => (loaded ? (mainSnapshotId(loaded.metadata) ?? 0) : 0);

async function tryCatalogCommit(
  t: TableCommitInput,
  catalog: TableCatalog,
  id: TableIdentifier,
  taken: LoadedTable | null | undefined,
): Promise<TableCommitted | null | 'conflict'> {
  const loaded = taken ?? (await loadOrCreate(t, catalog, id, taken === null));
  const base = await catalogBase(t, loaded);
  const change = changeOf(t, base);
  if (change === null) return null;
  t.guard?.();
  const snapshot = await writeSnapshotFiles(t, base, change);
  t.guard?.();
  const requirements: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: loaded.metadata['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': mainSnapshotId(loaded.metadata) },
  ];
  const updates: TableUpdate[] = [
    ...(base.evolved ? schemaUpdates(base) : []),
    { action: 'add-snapshot', snapshot },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshot['snapshot-id'] },
  ];
  const committed = await commitOrDecide(t, catalog, id, requirements, updates, snapshot);
  if (committed === 'conflict') return 'conflict';
  return {
    table: t.table,
    snapshot_id: snapshot['snapshot-id'],
    metadata_key: committed.metadataLocation,
    operation: change.operation,
    added_files: change.added.length,
    deleted_files: change.removed.size,
    ...(base.evolved ? { schema_evolved: base.evolved } : {}),
    catalog: { namespace: catalog.namespace.join('.'), metadata_location: committed.metadataLocation },
  };
}

/** The catalog's commit; on a 409 'conflict'; on "state unknown" the table re-loaded: landed when it holds the snapshot, else 'conflict' (tried again). */
async function commitOrDecide(
  t: TableCommitInput,
  catalog: TableCatalog,
  id: TableIdentifier,
  requirements: TableRequirement[],
  updates: TableUpdate[],
  snapshot: Snapshot,
): Promise<LoadedTable | 'conflict'> {
  try {
    return await catalog.client.commitTable(id, requirements, updates);
  } catch (err) {
    if (err instanceof CatalogCommitConflictError) return 'conflict';
    if (!(err instanceof CommitStateUnknownError)) throw err;
    const now = await catalog.client.loadTable(id);
    const landed = (now.metadata.snapshots ?? []).some((s) => s['snapshot-id'] === snapshot['snapshot-id']);
    logUnknown(t.logger, t.table, err, landed, snapshot['snapshot-id']);
    return landed ? now : 'conflict';
  }
}

function logUnknown(logger: Logger, table: string, err: CommitStateUnknownError, landed: boolean, snapshotId: number): void {
  logger.warn(
    { table, snapshot_id: snapshotId, answer: err.details, landed },
    landed
      ? "the catalog's answer to the commit was lost, but the re-loaded table holds its snapshot: committed"
      : "the catalog's answer to the commit was lost and the re-loaded table does not hold its snapshot: committing again",
  );
}

/** The new current schema as the catalog takes it: add-schema, then set-current-schema to the one just added (-1). */
function schemaUpdates(base: CommitBase): TableUpdate[] {
  return [
    { action: 'add-schema', schema: base.schema, 'last-column-id': base.meta['last-column-id'] },
    { action: 'set-current-schema', 'schema-id': -1 },
  ];
}

/**
 * The table in the catalog; created (and its namespace) when missing, or loaded when another
 * writer created it first. `missing`: this attempt's load already answered 404 (not asked again).
 */
async function loadOrCreate(t: TableCommitInput, catalog: TableCatalog, id: TableIdentifier, missing: boolean): Promise<LoadedTable> {
  if (!missing) {
    try {
      return await catalog.client.loadTable(id);
    } catch (err) {
      if (!(err instanceof CatalogNotFoundError)) throw err;
    }
  }
  await namespaceReady(catalog);
  const schema = tableSchema(t.columns);
  try {
    return await catalog.client.createTable(catalog.namespace, {
      name: t.table,
      schema,
      location: `${t.rootUri}/${t.table}`,
      'partition-spec': partitionSpec(schema, t.partitioning),
      properties: { 'format-version': '2', 'write.format.default': 'parquet', 'write.parquet.compression-codec': t.compression },
    });
  } catch (err) {
    if (err instanceof CatalogRequestError && err.status === 409) return catalog.client.loadTable(id);
    throw err;
  }
}

function namespaceReady(catalog: TableCatalog): Promise<void> {
  const ready = namespacesReady.get(catalog.client) ?? new Map<string, Promise<void>>();
  namespacesReady.set(catalog.client, ready);
  const key = catalog.namespace.join('\u001f');
  let p = ready.get(key);
  if (!p) {
    p = (async () => {
      if (await catalog.client.namespaceExists(catalog.namespace)) return;
      await catalog.client.createNamespace(catalog.namespace).catch((err: unknown) => {
        if (!(err instanceof CatalogRequestError && err.status === 409)) throw err;
      });
    })();
    p.catch(() => ready.delete(key));
    ready.set(key, p);
  }
  return p;
}

/**
 * The table as the catalog serves it, with the job's schema (the field ids the catalog answered are
 * checked against the ids the job's table record keeps: any difference is refused), its current
 * snapshot's manifests, and the contents asked at the snapshot main points at.
 */
async function catalogBase(t: TableCommitInput, loaded: LoadedTable): Promise<CommitBase> {
  const jobSchema = tableSchema(t.columns);
  const spec = partitionSpec(jobSchema, t.partitioning);
  const where = `the catalog's ${loaded.metadataLocation}`;
  const { meta, evolved } = withJobSchema(t.table, loaded.metadata as unknown as TableMetadata, where, jobSchema, spec);
  const manifests = await readSnapshotManifests(t.store, t.rootUri, meta);
  const contents = await t.contents(mainSnapshotId(loaded.metadata) ?? 0);
  return { current: null, meta, evolved, schema: currentSchema(meta, where), spec, manifests, parent: currentSnapshot(meta), contents };
}
