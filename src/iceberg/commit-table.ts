/**
 * One commit of an Iceberg table without a catalog: the table's current snapshot is made to list
 * exactly the data files given (the state's live files), written as a manifest of the added files,
 * the current manifests that lose files rewritten (kept files EXISTING, lost ones DELETED), a
 * manifest list, and `metadata/v<N+1>.metadata.json` created only if absent. The loser of a race
 * reads the table again and retries; a crash before the metadata file leaves version N current
 * (its files are never deleted by a run) and unreferenced manifests behind.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { ObjectStore } from '../store/store.js';
import { encodeManifest, encodeManifestList, ENTRY_STATUS, type ManifestEntry, type ManifestFile } from './avro-files.js';
import { keyUri } from './destination-uri.js';
import { IcebergCommitConflictError, IcebergReplaceChangesRowsError, IcebergTableRefusedError } from './errors.js';
import { evolves, schemaChange, schemaRefused, withSchema } from './schema-evolution.js';
import { manifestFile, nextManifests, readSnapshotManifests, type ReadManifest } from './snapshot-manifests.js';
import {
  currentSchema,
  currentSnapshot,
  newSnapshotId,
  newTable,
  withSnapshot,
  type Snapshot,
  type TableMetadata,
} from './table-metadata.js';
import {
  partitionSpec,
  tableSchema,
  type IcebergSchema,
  type PartitionSpec,
  type PartitionValues,
  type TableColumn,
} from './table-schema.js';
import { metadataKey, readCurrentVersion, refreshHint, writeVersion } from './table-versions.js';

export { metadataKey, readCurrentVersion, refreshHint, writeVersion } from './table-versions.js';
export { keyOf, readManifests, readSnapshotManifests } from './snapshot-manifests.js';

/** A data file the table must list. */
export interface LiveFile {
  key: string;
  rows: number;
  bytes: number;
  partition: PartitionValues;
  /** A compaction's merged file: its rows are those of the files it replaced (see TableCommitInput.operation). */
  compacted?: boolean;
}

/** The data files a commit makes the table list, and what its snapshot's summary adds (run id, windows). */
export interface TableContents {
  files: readonly LiveFile[];
  summary: Record<string, string>;
  /** Files the snapshot carries beside its manifests (its windows), each named by a summary property. */
  sidecars?: readonly Sidecar[];
  /**
   * A summary property and the value it takes for these contents (a digest of the windows): a
   * commit is due when the current snapshot's differs, even with the same files (windows without rows).
   */
  digest?: { property: string; value: string };
}

/** A file written under the table's metadata/ as `<commit id>-<suffix>` and named by the summary's `property` (its URI). */
export interface Sidecar {
  property: string;
  suffix: string;
  body: Buffer;
}

export interface TableCommitInput {
  store: ObjectStore;
  /** The table's folder under the destination (its name). */
  table: string;
  /** The destination as readers address it: `s3://bucket/prefix` or `file:///abs/path`. */
  rootUri: string;
  /** The table's columns, each with the field id the table keeps for its name (src/iceberg/field-ids.ts). */
  columns: readonly TableColumn[];
  partitioning: string;
  compression: string;
  /**
   * What the table must list, asked at each attempt with the metadata version it read (0: none):
   * the state as read after that version was committed, or a commit on top of another writer's
   * (a shard's) would take its files out again.
   */
  contents: (version: number) => Promise<TableContents>;
  /**
   * 'replace': the caller rewrites files without changing the table's rows (compaction); a commit
   * that would change the table's record count is refused (IcebergReplaceChangesRowsError). Without
   * it the operation follows from what changes: replace when every added file is `compacted` and
   * the record count is kept, else append, delete or overwrite.
   */
  operation?: 'replace' | undefined;
  logger: Logger;
  /** Called before each write; throws to stop (a lost lease). */
  guard?: (() => void) | undefined;
  /** Manifests a snapshot lists at most before they are merged (default MAX_MANIFESTS). */
  maxManifests?: number | undefined;
}

export interface TableCommitted {
  table: string;
  snapshot_id: number;
  /** The metadata file readers open (relative to the destination; through a catalog, the metadata location it returned). */
  metadata_key: string;
  operation: Snapshot['summary']['operation'];
  added_files: number;
  deleted_files: number;
  /** Present when this commit made a new schema current (columns added or promoted). */
  schema_evolved?: SchemaEvolved;
  /**
   * A commit through a catalog (output.catalog.uri): the table in it and the metadata location the
   * catalog returned; `conflicts`: the 409s it retried, `unknown_answers`: the commits whose answer
   * was lost or a 5xx (decided by re-loading the table).
   */
  catalog?: { namespace: string; metadata_location: string; conflicts?: number; unknown_answers?: number };
}

/** Manifests a snapshot lists at most before they are merged (Iceberg's commit.manifest.min-count-to-merge is 100). */
export const MAX_MANIFESTS = 100;

/** Commits tried before the table is left to a later run (exit 75). */
export const MAX_COMMIT_ATTEMPTS = 5;

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Columns a commit added to the table's schema, or promoted (int -> long), and the schema it made current. */
export interface SchemaEvolved {
  schema_id: number;
  added_columns: string[];
  promoted_columns: string[];
}

/**
 * The table's metadata with the job's schema (field ids from the table's record): the current one
 * when they agree, a new current schema when the job adds columns or promotes a type; any other
 * difference, or another partition spec, is refused.
 */
export function withJobSchema(
  table: string,
  meta: TableMetadata,
  key: string,
  wanted: IcebergSchema,
  spec: PartitionSpec,
): { meta: TableMetadata; evolved: SchemaEvolved | null } {
  const current = currentSchema(meta, key);
  const change = schemaChange(current, meta['last-column-id'], wanted);
  if (change.refused.length > 0) throw schemaRefused(table, change.refused.join('; '), `${key} against the job's table record`);
  const currentSpec = meta['partition-specs'].find((s) => s['spec-id'] === meta['default-spec-id']);
  if (!sameJson(currentSpec?.fields, spec.fields)) {
    throw new IcebergTableRefusedError(`Iceberg table ${table} has another partition spec than the job's`, {
      details: `the table's current metadata and the job's partitioning differ in their partition spec`,
      hint: 'Write the job to a new destination prefix (or a new table name), or restore the job as it was.',
    });
  }
  if (!evolves(change)) return { meta, evolved: null };
  const next = withSchema(meta, current, wanted);
  return {
    meta: next,
    evolved: { schema_id: next['current-schema-id'], added_columns: change.added, promoted_columns: change.promoted },
  };
}

/** Makes the table list exactly `files`; null when it already does. */
export async function commitTable(t: TableCommitInput): Promise<TableCommitted | null> {
  const result = await retryingConflicts(t.table, t.logger, () => tryCommit(t));
  if (result?.schema_evolved)
    t.logger.info({ table: t.table, ...result.schema_evolved }, 'Iceberg table schema evolved: older rows read null in the added columns');
  return result;
}

/**
 * Runs `attempt` (read the table, write the next version) again while another writer committed
 * first: at most MAX_COMMIT_ATTEMPTS times, each conflict logged, then IcebergCommitConflictError.
 */
export async function retryingConflicts<T>(table: string, logger: Logger, attempt: () => Promise<T | 'conflict'>): Promise<T> {
  for (let n = 1; ; n++) {
    const result = await attempt();
    if (result !== 'conflict') return result;
    if (n >= MAX_COMMIT_ATTEMPTS) throw new IcebergCommitConflictError(table, n);
    logger.warn({ table, attempt: n, of: MAX_COMMIT_ATTEMPTS }, 'another writer committed to the Iceberg table first: reading it again');
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 200 * n));
  }
}

/** The table as an attempt found it: its current version (null: none yet), its metadata with the job's schema, and what it must list. */
export interface CommitBase {
  current: { version: number; key: string } | null;
  meta: TableMetadata;
  evolved: SchemaEvolved | null;
  schema: IcebergSchema;
  spec: PartitionSpec;
  manifests: ReadManifest[];
  /** The current snapshot, the new one's parent. */
  parent: Snapshot | undefined;
  contents: TableContents;
}

/** What a commit changes: the files it adds and removes (by URI), their records, and the snapshot's operation. */
interface TableChange {
  added: LiveFile[];
  removed: Set<string>;
  removedRecords: number;
  totalRecords: number;
  operation: Snapshot['summary']['operation'];
}

/**
 * One attempt, in steps: load the current version (its schema and spec checked against the job's),
 * decide what changes (nothing: done), write the new snapshot's files, swap the pointer (create the
 * next metadata version only if absent); 'conflict' when another writer created it first.
 */
async function tryCommit(t: TableCommitInput): Promise<TableCommitted | null | 'conflict'> {
  const base = await loadCurrent(t);
  const change = changeOf(t, base);
  if (change === null) {
    if (base.current) await refreshHint(t.store, t.table, base.current.version);
    return null;
  }
  t.guard?.();
  const snapshot = await writeSnapshotFiles(t, base, change);
  t.guard?.();
  const key = await swapPointer(t, base, snapshot);
  if (key === null) return 'conflict';
  return {
    table: t.table,
    snapshot_id: snapshot['snapshot-id'],
    metadata_key: key,
    operation: change.operation,
    added_files: change.added.length,
    deleted_files: change.removed.size,
    ...(base.evolved ? { schema_evolved: base.evolved } : {}),
  };
}

/** The table's current version with the job's schema (refused when they cannot agree), its manifests, and the contents asked for on top of it. */
async function loadCurrent(t: TableCommitInput): Promise<CommitBase> {
  const { store, table, rootUri } = t;
  const jobSchema = tableSchema(t.columns);
  const spec = partitionSpec(jobSchema, t.partitioning);
  const current = await readCurrentVersion(store, table);
  const { meta, evolved } = current
    ? withJobSchema(table, current.meta, current.key, jobSchema, spec)
    : { meta: newTable(`${rootUri}/${table}`, jobSchema, spec, t.compression), evolved: null };
  const schema = currentSchema(meta, current?.key ?? metadataKey(table, 1));
  const manifests = current ? await readSnapshotManifests(store, rootUri, meta) : [];
  const contents = await t.contents(current?.version ?? 0);
  const parent = current ? currentSnapshot(meta) : undefined;
  return { current, meta, evolved, schema, spec, manifests, parent, contents };
}

/** The files to add and remove for the table to list exactly the contents; null when it already does (and its digest agrees). */
export function changeOf(t: TableCommitInput, base: CommitBase): TableChange | null {
  const { contents, manifests, parent } = base;
  const wanted = new Map(contents.files.map((f) => [keyUri(t.rootUri, f.key), f]));
  const live = new Set(
    manifests.flatMap((m) => m.entries.filter((e) => e.status !== ENTRY_STATUS.deleted).map((e) => e.data_file.file_path)),
  );
  const added = [...wanted].filter(([path]) => !live.has(path)).map(([, f]) => f);
  const removed = new Set([...live].filter((path) => !wanted.has(path)));
  const sameDigest = !contents.digest || parent?.summary[contents.digest.property] === contents.digest.value;
  if (added.length === 0 && removed.size === 0 && sameDigest) return null;
  const liveEntries = manifests.flatMap((m) => m.entries).filter((e) => e.status !== ENTRY_STATUS.deleted);
  const totalBefore = liveEntries.reduce((n, e) => n + e.data_file.record_count, 0);
  const totalRecords = contents.files.reduce((n, f) => n + f.rows, 0);
  const operation = operationOf(t, added, removed.size, totalBefore, totalRecords);
  const removedEntries = liveEntries.filter((e) => removed.has(e.data_file.file_path));
  const removedRecords = removedEntries.reduce((n, e) => n + e.data_file.record_count, 0);
  return { added, removed, removedRecords, totalRecords, operation };
}

/** Writes the new snapshot's manifests, sidecars and manifest list (nothing current yet); the snapshot that lists them. */
export async function writeSnapshotFiles(t: TableCommitInput, base: CommitBase, change: TableChange): Promise<Snapshot> {
  const { store, table } = t;
  const { schema, spec, parent, contents } = base;
  const { added, removed } = change;
  const uri = (key: string) => keyUri(t.rootUri, key);
  const snapshotId = newSnapshotId();
  const sequenceNumber = base.meta['last-sequence-number'] + 1;
  const commitId = randomUUID();
  const addedEntries: ManifestEntry[] = added.map((f) => ({
    status: ENTRY_STATUS.added,
    snapshot_id: snapshotId,
    sequence_number: null,
    file_sequence_number: null,
    data_file: {
      content: 0,
      file_path: uri(f.key),
      file_format: 'PARQUET',
      partition: Object.fromEntries(spec.fields.map((p) => [p.name, f.partition[p.name] ?? null])),
      record_count: f.rows,
      file_size_in_bytes: f.bytes,
    },
  }));
  const { toWrite, carried } = nextManifests(base.manifests, addedEntries, removed, snapshotId, t.maxManifests ?? MAX_MANIFESTS);
  const written: ManifestFile[] = [];
  for (const [i, m] of toWrite.entries()) {
    const body = await encodeManifest(m.entries, schema, spec);
    const key = `${table}/metadata/${commitId}-m${i}.avro`;
    await store.put(key, body, { contentType: 'application/avro' });
    written.push(manifestFile(uri(key), body.length, m.entries, snapshotId, sequenceNumber, schema, spec));
  }
  const sidecars: Record<string, string> = {};
  for (const c of contents.sidecars ?? []) {
    const key = `${table}/metadata/${commitId}-${c.suffix}`;
    await store.put(key, c.body, { contentType: 'application/octet-stream' });
    sidecars[c.property] = uri(key);
  }
  const listKey = `${table}/metadata/snap-${snapshotId}-1-${commitId}.avro`;
  const list = [...written, ...carried.map((m) => m.file)];
  await store.put(listKey, await encodeManifestList(list, { id: snapshotId, parent: parent?.['snapshot-id'] ?? null, sequenceNumber }), {
    contentType: 'application/avro',
  });
  return {
    'snapshot-id': snapshotId,
    ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
    'sequence-number': sequenceNumber,
    'timestamp-ms': Date.now(),
    'manifest-list': uri(listKey),
    summary: {
      operation: change.operation,
      'added-data-files': String(added.length),
      'added-records': String(added.reduce((n, f) => n + f.rows, 0)),
      'deleted-data-files': String(removed.size),
      'deleted-records': String(change.removedRecords),
      'total-data-files': String(contents.files.length),
      'total-records': String(change.totalRecords),
      ...contents.summary,
      ...(contents.digest ? { [contents.digest.property]: contents.digest.value } : {}),
      ...sidecars,
    },
    'schema-id': schema['schema-id'],
  };
}

/** The commit point: the next metadata version created only if absent; its key, or null when another writer created it first. */
async function swapPointer(t: TableCommitInput, base: CommitBase, snapshot: Snapshot): Promise<string | null> {
  const { current } = base;
  const meta = withSnapshot(base.meta, snapshot, current ? keyUri(t.rootUri, current.key) : null);
  return writeVersion(t.store, t.table, (current?.version ?? 0) + 1, meta);
}

/**
 * The snapshot's operation (apache/iceberg format/spec.md, Snapshots): `replace` when "data and
 * delete files were added and removed without changing table data", as compaction does.
 */
function operationOf(
  t: TableCommitInput,
  added: readonly LiveFile[],
  removed: number,
  totalBefore: number,
  totalAfter: number,
): Snapshot['summary']['operation'] {
  if (t.operation === 'replace') {
    if (totalAfter !== totalBefore) throw new IcebergReplaceChangesRowsError(t.table, totalBefore, totalAfter);
    return 'replace';
  }
  // What a compaction committed to the state and not to the table (a crash between the two).
  if (added.length > 0 && added.every((f) => f.compacted === true) && totalAfter === totalBefore) return 'replace';
  return removed === 0 ? 'append' : added.length === 0 ? 'delete' : 'overwrite';
}
