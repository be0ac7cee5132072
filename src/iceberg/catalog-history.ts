/**
 * expire-snapshots and remove-orphan-files on tables committed through a REST catalog
 * (output.catalog.uri): the table as the catalog serves it is the one read (its current metadata
 * loaded, never a file listed), and an expiry is the catalog's commit of `remove-snapshots` with
 * the requirements that the table and every ref it has are still as loaded (assert-table-uuid,
 * assert-ref-snapshot-id per ref). The catalog owns its metadata files: neither command deletes one
 * its current metadata names (the current one and its metadata-log).
 *
 * A 409 re-loads the table and plans again. A 5xx or a lost answer ("state unknown") re-loads the
 * table: the expiry landed when none of the expired snapshots is left (the files only they named
 * are then deleted), else it is tried again. A crash between the catalog's commit and the deletes
 * leaves files no snapshot names: every reader reads the table, and remove-orphan-files takes them.
 */
import {
  CatalogCommitConflictError,
  CatalogNotFoundError,
  CommitStateUnknownError,
  type LoadedTable,
  type TableIdentifier,
  type TableRequirement,
} from './catalog/index.js';
import type { TableCatalog } from './catalog-commit.js';
import type { TableMetadata } from './table-metadata.js';

/** A table's current metadata as the maintenance commands read it, from its files or its catalog. */
export interface CurrentTable {
  /** The metadata file's version (files: `v<N>`; a catalog's `<N>-<uuid>.metadata.json`: N; else 0). */
  version: number;
  /** The current metadata file as a key of the destination (a catalog may keep it elsewhere: then its URI). */
  key: string;
  meta: TableMetadata;
  /** Loaded through the catalog (absent: from the destination's files). */
  loaded?: LoadedTable;
}

const CATALOG_METADATA_FILE = /\/(\d+)-[^/]*\.metadata\.json$/;

/** The version a catalog's metadata file name carries (Iceberg's Java naming `00003-<uuid>.metadata.json`), 0 when none. */
export function catalogMetadataVersion(location: string): number {
  const m = CATALOG_METADATA_FILE.exec(location);
  return m ? Number(m[1]) : 0;
}

/** A destination key of `uri` when it lies under the destination, else null (the catalog keeps it elsewhere). */
export function keyUnder(rootUri: string, uri: string): string | null {
  return uri.startsWith(`${rootUri}/`) ? decodeURI(uri.slice(rootUri.length + 1)) : null;
}

/** The table as the catalog serves it now; null when the catalog has no such table. */
export async function loadCatalogTable(catalog: TableCatalog, table: string, rootUri: string): Promise<CurrentTable | null> {
  let loaded: LoadedTable;
  try {
    loaded = await catalog.client.loadTable(tableId(catalog, table));
  } catch (err) {
    if (err instanceof CatalogNotFoundError) return null;
    throw err;
  }
  const m = loaded.metadata as unknown as Partial<TableMetadata>;
  // A catalog may leave out what is empty; the commands read these lists.
  const meta = {
    ...m,
    snapshots: m.snapshots ?? [],
    'snapshot-log': m['snapshot-log'] ?? [],
    'metadata-log': m['metadata-log'] ?? [],
    refs: m.refs ?? {},
  } as TableMetadata;
  const key = keyUnder(rootUri, loaded.metadataLocation) ?? loaded.metadataLocation;
  return { version: catalogMetadataVersion(loaded.metadataLocation), key, meta, loaded };
}

const tableId = (catalog: TableCatalog, table: string): TableIdentifier => ({ namespace: catalog.namespace, name: table });

/**
 * The catalog's commit of an expiry: `remove-snapshots` of `expired`, if the table and each of its
 * refs are still as `current` has them. The table as it is after the commit, or 'conflict' (re-load
 * and plan again). On "state unknown" the table is re-loaded: landed when none of `expired` is left.
 */
export async function commitExpiry(
  catalog: TableCatalog,
  table: string,
  current: CurrentTable,
  expired: readonly number[],
): Promise<LoadedTable | 'conflict'> {
  const id = tableId(catalog, table);
  const requirements: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: current.meta['table-uuid'] },
    ...Object.entries(current.meta.refs).map(([ref, r]): TableRequirement => ({
      type: 'assert-ref-snapshot-id',
      ref,
      'snapshot-id': r['snapshot-id'],
    })),
  ];
  try {
    return await catalog.client.commitTable(id, requirements, [{ action: 'remove-snapshots', 'snapshot-ids': [...expired] }]);
  } catch (err) {
    if (err instanceof CatalogCommitConflictError) return 'conflict';
    if (!(err instanceof CommitStateUnknownError)) throw err;
    const now = await catalog.client.loadTable(id);
    const gone = new Set(expired);
    return (now.metadata.snapshots ?? []).some((s) => gone.has(s['snapshot-id'])) ? 'conflict' : now;
  }
}

/** Metadata files the catalog's current metadata names (the current one, its metadata-log), as destination keys. */
export function catalogMetadataKeys(current: CurrentTable, rootUri: string): string[] {
  return [current.key, ...current.meta['metadata-log'].map((m) => keyUnder(rootUri, m['metadata-file']))].filter(
    (k): k is string => k !== null,
  );
}

/** A catalog metadata file newer than the current one (a commit since the table was loaded): never an orphan. */
export function isNewerCatalogMetadata(key: string, current: CurrentTable | null): boolean {
  const version = catalogMetadataVersion(`/${key}`);
  return key.includes('/metadata/') && version > 0 && version > (current?.version ?? 0);
}
