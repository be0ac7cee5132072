/**
 * Snapshot expiry (Iceberg's expire_snapshots): each table's next metadata version without the
 * snapshots committed before the retention's cutoff, then the deletion of what only they named.
 *
 * Order, and why a crash anywhere leaves a readable table:
 * 1. read the current version N (the listing decides, as for a commit); the snapshots committed
 *    before the cutoff expire, except the current one and any a ref names;
 * 2. create `v<N+1>.metadata.json` only if absent, as a commit does (a conflict reads the table
 *    again: another writer's snapshot is kept, never lost), without them: the snapshot-log keeps
 *    the entries after the last expired snapshot, the metadata-log keeps the files written within
 *    the retention and always version N;
 * 3. only then delete the expired snapshots' manifest lists, the manifests no retained snapshot's
 *    list holds, the data files they hold that no retained snapshot reads and the state does not
 *    list (completed windows, pending markers), the files only their summaries name, and the
 *    metadata files the metadata-log no longer names.
 * Before 2 nothing changed; after it the current version names none of the files of 3, so a
 * crash among the deletes leaves files no one reads (remove-orphan-files takes them).
 * Through a catalog (output.catalog.uri), 1 loads the table from it and 2 is its commit of
 * remove-snapshots; its metadata files are the catalog's, never deleted here (catalog-history.ts).
 */
import type { ObjectStore } from '../store/store.js';
import { retryingConflicts } from './commit-table.js';
import { keyOf } from './snapshot-manifests.js';
import { readCurrentVersion, refreshHint, writeVersion } from './table-versions.js';
import { commitExpiry, keyUnder, loadCatalogTable, type CurrentTable } from './catalog-history.js';
import { destinationUri, keyUri } from './destination-uri.js';
import type { Snapshot, TableMetadata } from './table-metadata.js';
import { historyReport, type TableHistoryOptions, type TableHistoryReport } from './table-history.js';
import { SnapshotFilesReader, stateFileKeys } from './table-references.js';

/** The files an expiry deletes (dry run: would delete), by kind. */
export interface ExpiredFiles {
  data_files: string[];
  manifests: string[];
  manifest_lists: string[];
  /** Files only expired snapshots' summaries name (`insight-export.*-file`). */
  summary_files: string[];
  metadata_files: string[];
}

export interface TableExpiry {
  table: string;
  /** The version written (null: the table has no version, or nothing expired so none was written). */
  metadata_key: string | null;
  expired_snapshots: number[];
  /** Snapshots the table keeps, the current one included. */
  kept_snapshots: number;
  deleted: ExpiredFiles;
  /** Through a catalog: the expiry's commit (remove-snapshots of `expired_snapshots`). */
  catalog?: ExpiryCatalogCommit;
}

/**
 * An expiry's commit through the catalog, as a run's iceberg_commits[].catalog: its namespace, the
 * metadata location the catalog answered it with, and the answers on the way (409s retried after
 * re-loading the table; answers lost or 5xx, decided from the table re-loaded).
 */
export interface ExpiryCatalogCommit {
  namespace: string;
  metadata_location: string;
  conflicts: number;
  unknown_answers: number;
}

export type ExpireSnapshotsReport = TableHistoryReport<TableExpiry>;

/** What one attempt found to do: the next version (null: nothing expires), and what to delete once it is written. */
interface ExpiryPlan {
  version: number;
  next: TableMetadata | null;
  expired: Snapshot[];
  kept: number;
  deleted: ExpiredFiles;
  /** The metadata file the expiry made (a key of the destination; null: none, or the catalog keeps it elsewhere). */
  metadataKey?: string | null;
  catalog?: Pick<ExpiryCatalogCommit, 'namespace' | 'metadata_location'>;
}

export async function expireSnapshots(o: TableHistoryOptions): Promise<ExpireSnapshotsReport> {
  const now = (o.now ?? Date.now)();
  const cutoff = now - o.retentionMs;
  const rootUri = destinationUri(o.store);
  let stateKeys: Promise<Set<string>> | undefined;
  const tables: TableExpiry[] = [];
  for (const table of o.tables) {
    const done = await retryingConflicts(table, o.logger, () => expiryAttempt(o, table, rootUri, cutoff, now));
    const answers = o.catalog?.client.takeCommitAnswers({ namespace: o.catalog.namespace, name: table });
    if (!done?.next) {
      tables.push({ table, metadata_key: null, expired_snapshots: [], kept_snapshots: done?.kept ?? 0, deleted: none() });
      continue;
    }
    // A file the state lists stays (a window committed after the table's last commit); read once for every table.
    const live = await (stateKeys ??= stateFileKeys(o.state));
    const deleted = { ...done.deleted, data_files: done.deleted.data_files.filter((k) => !live.has(k)) };
    if (!o.dryRun) {
      o.guard?.();
      await o.store.deleteMany(Object.values(deleted).flat());
    }
    const expiry: TableExpiry = {
      table,
      metadata_key: o.dryRun ? null : (done.metadataKey ?? null),
      expired_snapshots: done.expired.map((s) => s['snapshot-id']),
      kept_snapshots: done.kept,
      deleted,
      ...(done.catalog && answers && !o.dryRun
        ? { catalog: { ...done.catalog, conflicts: answers.conflicts, unknown_answers: answers.unknown } }
        : {}),
    };
    o.logger.info(
      { ...expiry, deleted: Object.fromEntries(Object.entries(deleted).map(([k, v]) => [k, v.length])) },
      o.dryRun ? 'Iceberg snapshots would expire' : 'Iceberg snapshots expired',
    );
    tables.push(expiry);
  }
  return historyReport(o, cutoff, tables);
}

/**
 * One attempt: the table read (its files, or its catalog), the expiry planned and committed:
 * without a catalog the next version's file created only if absent, with one the catalog's commit
 * of remove-snapshots. 'conflict': another writer moved the table first (read it again).
 */
async function expiryAttempt(
  o: TableHistoryOptions,
  table: string,
  rootUri: string,
  cutoff: number,
  now: number,
): Promise<ExpiryPlan | null | 'conflict'> {
  const current = o.catalog ? await loadCatalogTable(o.catalog, table, rootUri) : await readCurrentVersion(o.store, table);
  if (!current) return null;
  const plan = await planExpiry(o.store, rootUri, current, cutoff, now, { metadataFiles: !o.catalog });
  if (o.dryRun) return plan;
  // Nothing expires: the hint is brought up to date (a crash may have left it behind), as a commit does.
  if (!plan.next) {
    if (!o.catalog) await refreshHint(o.store, table, current.version);
    return plan;
  }
  o.guard?.();
  if (!o.catalog) {
    const key = await writeVersion(o.store, table, plan.version, plan.next);
    return key === null ? 'conflict' : { ...plan, metadataKey: key };
  }
  const after = await commitExpiry(
    o.catalog,
    table,
    current,
    plan.expired.map((s) => s['snapshot-id']),
  );
  if (after === 'conflict') return 'conflict';
  // What the catalog's current metadata names stays, a snapshot another writer added meanwhile included.
  const named = await namedByTable(o.store, rootUri, after.metadata as unknown as TableMetadata);
  const keep = (keys: string[]) => keys.filter((k) => !named.has(k));
  const d = plan.deleted;
  const deleted: ExpiredFiles = {
    data_files: keep(d.data_files),
    manifests: keep(d.manifests),
    manifest_lists: keep(d.manifest_lists),
    summary_files: keep(d.summary_files),
    metadata_files: keep(d.metadata_files),
  };
  return {
    ...plan,
    deleted,
    metadataKey: keyUnder(rootUri, after.metadataLocation),
    catalog: { namespace: o.catalog.namespace.join('.'), metadata_location: after.metadataLocation },
  };
}

/** Every file a table's snapshots name (a snapshot that cannot be read stops the expiry). */
function namedByTable(store: ObjectStore, rootUri: string, meta: TableMetadata): Promise<Set<string>> {
  return new SnapshotFilesReader(store, rootUri).addNamedBy(meta.snapshots ?? [], new Set<string>());
}

const none = (): ExpiredFiles => ({ data_files: [], manifests: [], manifest_lists: [], summary_files: [], metadata_files: [] });

/** The next version without the snapshots committed before `cutoff`, and what only they named. */
async function planExpiry(
  store: ObjectStore,
  rootUri: string,
  current: CurrentTable,
  cutoff: number,
  now: number,
  opts: { metadataFiles: boolean },
): Promise<ExpiryPlan> {
  const { meta } = current;
  const protectedIds = new Set([meta['current-snapshot-id'], ...Object.values(meta.refs).map((r) => r['snapshot-id'])]);
  const expired = meta.snapshots.filter((s) => s['timestamp-ms'] < cutoff && !protectedIds.has(s['snapshot-id']));
  const metadataLog = meta['metadata-log'].filter((m) => m['timestamp-ms'] >= cutoff);
  // Through a catalog its metadata files are the catalog's: none is dropped here.
  const droppedMetadata = opts.metadataFiles ? meta['metadata-log'].filter((m) => m['timestamp-ms'] < cutoff) : [];
  if (expired.length === 0 && droppedMetadata.length === 0)
    return { version: current.version, next: null, expired, kept: meta.snapshots.length, deleted: none() };

  const expiredIds = new Set(expired.map((s) => s['snapshot-id']));
  const kept = meta.snapshots.filter((s) => !expiredIds.has(s['snapshot-id']));
  const reader = new SnapshotFilesReader(store, rootUri);
  // What the kept snapshots name stays; a kept snapshot that cannot be read stops the expiry before it writes.
  const keep = await reader.addNamedBy(kept, new Set<string>());
  const candidates = none();
  for (const s of expired) {
    // An expired snapshot's list or manifest already gone (a crashed delete): what it named is left to remove-orphan-files.
    const f = await reader.files(s, { missingOk: true });
    candidates.manifest_lists.push(keyOf(rootUri, s['manifest-list'], current.key));
    if (!f) continue;
    candidates.manifests.push(...f.manifests);
    candidates.data_files.push(...f.dataFiles, ...f.deletedDataFiles);
    candidates.summary_files.push(...f.summaryFiles);
  }
  candidates.metadata_files.push(...droppedMetadata.map((m) => keyOf(rootUri, m['metadata-file'], current.key)));
  const onlyExpired = (keys: string[]) => [...new Set(keys)].filter((k) => !keep.has(k));

  // The snapshot-log stays a suffix of the history: the entries after the last expired snapshot's.
  const log = meta['snapshot-log'];
  const lastExpired = log.findLastIndex((e) => expiredIds.has(e['snapshot-id']));
  const next: TableMetadata = {
    ...meta,
    'last-updated-ms': now,
    snapshots: kept,
    'snapshot-log': log.slice(lastExpired + 1),
    'metadata-log': [...metadataLog, { 'metadata-file': keyUri(rootUri, current.key), 'timestamp-ms': meta['last-updated-ms'] }],
  };
  return {
    version: current.version + 1,
    next,
    expired,
    kept: kept.length,
    deleted: {
      data_files: onlyExpired(candidates.data_files),
      manifests: onlyExpired(candidates.manifests),
      manifest_lists: onlyExpired(candidates.manifest_lists),
      summary_files: onlyExpired(candidates.summary_files),
      metadata_files: onlyExpired(candidates.metadata_files),
    },
  };
}
