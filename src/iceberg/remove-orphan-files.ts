/**
 * Orphan-file removal (Iceberg's remove_orphan_files): the files in a table's folder that nothing
 * names and that are older than the retention. Orphans are what crashes leave: manifests and
 * manifest lists of a commit that never wrote its metadata file, files an expiry was deleting,
 * data files of a window whose commit never finished and that no pending marker names any more.
 *
 * Named, and so kept: every file a snapshot of the current version names (its manifest list,
 * manifests, the data files they hold as ADDED or EXISTING, the files its summary names under
 * `insight-export.*-file`), the current metadata file, the files of its metadata-log, any newer
 * `v<N>.metadata.json` (a commit since the read), `version-hint.text`, and every key the job's
 * state names (completed windows' files, pending markers' keys). Only the writer's own files are
 * candidates: `metadata/` and `.iceberg.parquet` data files; anything else in the folder is left
 * alone. The age rule (the store's last-modified time before now - retention) keeps a file a
 * concurrent writer has just uploaded and not yet committed.
 *
 * Through a catalog (output.catalog.uri) the table is loaded from it: its current metadata names
 * what stays (the metadata file the catalog answered, its metadata-log, the snapshots' files), and
 * a catalog metadata file newer than the loaded one is a commit since; a table the catalog does not
 * have keeps every file (catalog-history.ts).
 */
import { ICEBERG_DATA_EXTENSION } from '../sink/formats.js';
import { keyOf } from './snapshot-manifests.js';
import { readCurrentVersion } from './table-versions.js';
import { catalogMetadataKeys, isNewerCatalogMetadata, loadCatalogTable } from './catalog-history.js';
import { destinationUri } from './destination-uri.js';
import { historyReport, type TableHistoryOptions, type TableHistoryReport } from './table-history.js';
import { SnapshotFilesReader, stateFileKeys } from './table-references.js';

export interface TableOrphans {
  table: string;
  /** Files in the table's folder. */
  listed: number;
  /** Orphans deleted (dry run: that would be). */
  deleted: string[];
  /** Orphans last modified within the retention: kept (a writer may be about to commit them). */
  too_young: number;
  /** Files in the folder the writer does not make (neither metadata/ nor .iceberg.parquet): never deleted. */
  foreign: number;
  /** Through a catalog, a table it does not have: nothing of its folder is removed (what names its files is unknown). */
  not_in_catalog?: true;
}

export type RemoveOrphanFilesReport = TableHistoryReport<TableOrphans>;

const VERSION_FILE = /\/metadata\/v(\d+)\.metadata\.json$/;

export async function removeOrphanFiles(o: TableHistoryOptions): Promise<RemoveOrphanFilesReport> {
  const cutoff = (o.now ?? Date.now)() - o.retentionMs;
  const rootUri = destinationUri(o.store);
  const stateKeys = await stateFileKeys(o.state);
  const tables: TableOrphans[] = [];
  for (const table of o.tables) {
    const named = new Set([`${table}/metadata/version-hint.text`]);
    const current = o.catalog ? await loadCatalogTable(o.catalog, table, rootUri) : await readCurrentVersion(o.store, table);
    if (!current && o.catalog) {
      tables.push(await notInCatalog(o, table));
      continue;
    }
    if (current) {
      const metadataFiles = o.catalog
        ? catalogMetadataKeys(current, rootUri)
        : [current.key, ...current.meta['metadata-log'].map((m) => keyOf(rootUri, m['metadata-file'], current.key))];
      for (const k of metadataFiles) named.add(k);
      // A snapshot that cannot be read stops the removal: what it names is unknown.
      await new SnapshotFilesReader(o.store, rootUri).addNamedBy(current.meta.snapshots, named);
    }
    const found: TableOrphans = { table, listed: 0, deleted: [], too_young: 0, foreign: 0 };
    for await (const obj of o.store.list(`${table}/`, { etags: false })) {
      found.listed++;
      if (named.has(obj.key) || stateKeys.has(obj.key)) continue;
      const version = VERSION_FILE.exec(obj.key);
      if (version && Number(version[1]) > (current?.version ?? 0)) continue;
      if (o.catalog && isNewerCatalogMetadata(obj.key, current)) continue;
      if (!obj.key.startsWith(`${table}/metadata/`) && !obj.key.endsWith(ICEBERG_DATA_EXTENSION)) found.foreign++;
      else if (obj.lastModified === undefined || obj.lastModified.getTime() >= cutoff) found.too_young++;
      else found.deleted.push(obj.key);
    }
    if (found.deleted.length > 0 && !o.dryRun) {
      o.guard?.();
      await o.store.deleteMany(found.deleted);
    }
    o.logger.info(
      { table, listed: found.listed, orphans: found.deleted.length, too_young: found.too_young, foreign: found.foreign },
      o.dryRun ? 'Iceberg orphan files that would be removed' : 'Iceberg orphan files removed',
    );
    tables.push(found);
  }
  return historyReport(o, cutoff, tables);
}

/**
 * Through a catalog, a table the catalog does not have (not committed yet, or another catalog,
 * warehouse or namespace than the one that holds it): its folder is counted, nothing is deleted.
 */
async function notInCatalog(o: TableHistoryOptions, table: string): Promise<TableOrphans> {
  let listed = 0;
  for await (const _ of o.store.list(`${table}/`, { etags: false })) listed++;
  if (listed > 0)
    o.logger.warn(
      { table, listed, namespace: o.catalog!.namespace.join('.') },
      'the catalog has no such table but its folder holds files: none removed (check output.catalog.uri, warehouse and namespace; a run commits the table)',
    );
  return { table, listed, deleted: [], too_young: 0, foreign: 0, not_in_catalog: true };
}
