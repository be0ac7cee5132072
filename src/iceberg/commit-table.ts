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
import { PreconditionFailedError } from '../store/errors.js';
import type { ObjectStore } from '../store/store.js';
import {
  decodeManifest,
  decodeManifestList,
  encodeManifest,
  encodeManifestList,
  ENTRY_STATUS,
  partitionSummaries,
  type ManifestEntry,
  type ManifestFile,
} from './avro-files.js';
import { keyUri } from './destination-uri.js';
import { IcebergCommitConflictError, IcebergMetadataError, IcebergReplaceChangesRowsError, IcebergTableRefusedError } from './errors.js';
import { evolves, schemaChange, schemaRefused, withSchema } from './schema-evolution.js';
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
  /** The metadata file readers open (relative to the destination). */
  metadata_key: string;
  operation: Snapshot['summary']['operation'];
  added_files: number;
  deleted_files: number;
  /** Present when this commit made a new schema current (columns added or promoted). */
  schema_evolved?: SchemaEvolved;
}

/** Manifests a snapshot lists at most before they are merged (Iceberg's commit.manifest.min-count-to-merge is 100). */
export const MAX_MANIFESTS = 100;
/** Data files a merged manifest lists at most (about 20 MB of Avro). */
const ENTRIES_PER_MERGED_MANIFEST = 100_000;

/** Commits tried before the table is left to a later run (exit 75). */
export const MAX_COMMIT_ATTEMPTS = 5;

const METADATA_FILE = /\/v(\d+)\.metadata\.json$/;

export function metadataKey(table: string, version: number): string {
  return `${table}/metadata/v${version}.metadata.json`;
}

/** The newest metadata version of a table (listed, not the hint: a crash may have left the hint behind), null when none. */
export async function readCurrentVersion(
  store: ObjectStore,
  table: string,
): Promise<{ version: number; key: string; meta: TableMetadata } | null> {
  let version = 0;
  for await (const o of store.list(`${table}/metadata/`, { etags: false })) {
    const m = METADATA_FILE.exec(o.key);
    if (m && o.key === metadataKey(table, Number(m[1]))) version = Math.max(version, Number(m[1]));
  }
  if (version === 0) return null;
  const key = metadataKey(table, version);
  const obj = await store.get(key);
  if (!obj) throw new IcebergMetadataError(key, 'listed but gone');
  try {
    return { version, key, meta: JSON.parse(obj.body.toString('utf8')) as TableMetadata };
  } catch (err) {
    throw new IcebergMetadataError(key, `not valid JSON (${(err as Error).message})`);
  }
}

/** A manifest of the current snapshot, with its entries (sequence numbers inherited where the entry has none). */
interface ReadManifest {
  file: ManifestFile;
  entries: ManifestEntry[];
}

export function keyOf(rootUri: string, path: string, at: string): string {
  if (!path.startsWith(`${rootUri}/`)) throw new IcebergMetadataError(at, `${path} is not under ${rootUri} (was the table moved?)`);
  return decodeURI(path.slice(rootUri.length + 1));
}

async function readAvro(store: ObjectStore, key: string): Promise<Buffer> {
  const obj = await store.get(key);
  if (!obj) throw new IcebergMetadataError(key, 'missing');
  return obj.body;
}

/** The current snapshot's manifests and their entries. */
export async function readSnapshotManifests(store: ObjectStore, rootUri: string, meta: TableMetadata): Promise<ReadManifest[]> {
  const snapshot = currentSnapshot(meta);
  return snapshot ? readManifests(store, rootUri, snapshot) : [];
}

/** A snapshot's manifests and their entries. */
export async function readManifests(store: ObjectStore, rootUri: string, snapshot: Snapshot): Promise<ReadManifest[]> {
  const listKey = keyOf(rootUri, snapshot['manifest-list'], 'manifest list');
  const manifests = await decodeManifestList(await readAvro(store, listKey));
  const out: ReadManifest[] = [];
  for (const file of manifests) {
    const entries = await decodeManifest(await readAvro(store, keyOf(rootUri, file.manifest_path, listKey)));
    for (const e of entries) {
      if (e.status === ENTRY_STATUS.added) {
        e.sequence_number ??= file.sequence_number;
        e.file_sequence_number ??= file.sequence_number;
      }
    }
    out.push({ file, entries });
  }
  return out;
}

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
function withJobSchema(
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

/**
 * Creates `metadata/v<version>.metadata.json` only if absent (the commit point), then refreshes
 * the hint; its key, or null when another writer created that version first.
 */
export async function writeVersion(store: ObjectStore, table: string, version: number, meta: TableMetadata): Promise<string | null> {
  const key = metadataKey(table, version);
  try {
    await store.put(key, JSON.stringify(meta, null, 2), { contentType: 'application/json', ifNoneMatch: '*' });
  } catch (err) {
    if (err instanceof PreconditionFailedError) return null;
    throw err;
  }
  await refreshHint(store, table, version);
  return key;
}

async function tryCommit(t: TableCommitInput): Promise<TableCommitted | null | 'conflict'> {
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

  const uri = (key: string) => keyUri(rootUri, key);
  const wanted = new Map(contents.files.map((f) => [uri(f.key), f]));
  const live = new Set(
    manifests.flatMap((m) => m.entries.filter((e) => e.status !== ENTRY_STATUS.deleted).map((e) => e.data_file.file_path)),
  );
  const added = [...wanted].filter(([path]) => !live.has(path)).map(([, f]) => f);
  const removed = new Set([...live].filter((path) => !wanted.has(path)));
  const parent = current ? currentSnapshot(meta) : undefined;
  const sameDigest = !contents.digest || parent?.summary[contents.digest.property] === contents.digest.value;
  if (added.length === 0 && removed.size === 0 && sameDigest) {
    if (current) await refreshHint(store, table, current.version);
    return null;
  }
  const liveEntries = manifests.flatMap((m) => m.entries).filter((e) => e.status !== ENTRY_STATUS.deleted);
  const totalBefore = liveEntries.reduce((n, e) => n + e.data_file.record_count, 0);
  const totalRecords = contents.files.reduce((n, f) => n + f.rows, 0);
  const operation = operationOf(t, added, removed.size, totalBefore, totalRecords);

  const snapshotId = newSnapshotId();
  const sequenceNumber = meta['last-sequence-number'] + 1;
  const commitId = randomUUID();
  let newManifests: { entries: ManifestEntry[] }[] = [];
  let carried: ReadManifest[] = [];
  if (added.length > 0) {
    newManifests.push({
      entries: added.map((f) => ({
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
      })),
    });
  }
  for (const m of manifests) {
    const liveEntries = m.entries.filter((e) => e.status !== ENTRY_STATUS.deleted);
    if (liveEntries.length === 0) continue;
    if (!liveEntries.some((e) => removed.has(e.data_file.file_path))) {
      carried.push(m);
      continue;
    }
    newManifests.push({
      entries: liveEntries.map((e) =>
        removed.has(e.data_file.file_path)
          ? { ...e, status: ENTRY_STATUS.deleted, snapshot_id: snapshotId }
          : { ...e, status: ENTRY_STATUS.existing },
      ),
    });
  }

  if (newManifests.length + carried.length > (t.maxManifests ?? MAX_MANIFESTS)) {
    // Every commit adds a manifest: past the bound the snapshot's entries are merged into as few
    // manifests as they fill (live ones EXISTING, sequence numbers kept), as Iceberg's merge-append
    // does, so that readers plan a table from a bounded number of files.
    const entries = [
      ...newManifests.flatMap((m) => m.entries),
      ...carried.flatMap((m) =>
        m.entries.filter((e) => e.status !== ENTRY_STATUS.deleted).map((e) => ({ ...e, status: ENTRY_STATUS.existing })),
      ),
    ];
    newManifests = [];
    for (let i = 0; i < entries.length; i += ENTRIES_PER_MERGED_MANIFEST)
      newManifests.push({ entries: entries.slice(i, i + ENTRIES_PER_MERGED_MANIFEST) });
    carried = [];
  }

  t.guard?.();
  const written: ManifestFile[] = [];
  for (const [i, m] of newManifests.entries()) {
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

  const removedEntries = liveEntries.filter((e) => removed.has(e.data_file.file_path));
  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
    'sequence-number': sequenceNumber,
    'timestamp-ms': Date.now(),
    'manifest-list': uri(listKey),
    summary: {
      operation,
      'added-data-files': String(added.length),
      'added-records': String(added.reduce((n, f) => n + f.rows, 0)),
      'deleted-data-files': String(removed.size),
      'deleted-records': String(removedEntries.reduce((n, e) => n + e.data_file.record_count, 0)),
      'total-data-files': String(contents.files.length),
      'total-records': String(totalRecords),
      ...contents.summary,
      ...(contents.digest ? { [contents.digest.property]: contents.digest.value } : {}),
      ...sidecars,
    },
    'schema-id': schema['schema-id'],
  };
  t.guard?.();
  const key = await writeVersion(
    store,
    table,
    (current?.version ?? 0) + 1,
    withSnapshot(meta, snapshot, current ? uri(current.key) : null),
  );
  if (key === null) return 'conflict';
  return {
    table,
    snapshot_id: snapshotId,
    metadata_key: key,
    operation,
    added_files: added.length,
    deleted_files: removed.size,
    ...(evolved ? { schema_evolved: evolved } : {}),
  };
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

function manifestFile(
  path: string,
  length: number,
  entries: readonly ManifestEntry[],
  snapshotId: number,
  sequenceNumber: number,
  schema: IcebergSchema,
  spec: PartitionSpec,
): ManifestFile {
  const of = (status: number) => entries.filter((e) => e.status === status);
  const rows = (list: ManifestEntry[]) => list.reduce((n, e) => n + e.data_file.record_count, 0);
  const sequences = entries.map((e) => e.sequence_number ?? sequenceNumber);
  return {
    manifest_path: path,
    manifest_length: length,
    partition_spec_id: spec['spec-id'],
    content: 0,
    sequence_number: sequenceNumber,
    min_sequence_number: sequences.reduce((a, b) => Math.min(a, b), sequenceNumber),
    added_snapshot_id: snapshotId,
    added_files_count: of(ENTRY_STATUS.added).length,
    existing_files_count: of(ENTRY_STATUS.existing).length,
    deleted_files_count: of(ENTRY_STATUS.deleted).length,
    added_rows_count: rows(of(ENTRY_STATUS.added)),
    existing_rows_count: rows(of(ENTRY_STATUS.existing)),
    deleted_rows_count: rows(of(ENTRY_STATUS.deleted)),
    partitions: partitionSummaries(entries, schema, spec),
  };
}

/**
 * `metadata/version-hint.text`: the current version for readers that open a table by its folder
 * (DuckDB's iceberg_scan, icebird). Only a hint: commits go by the metadata files themselves.
 */
export async function refreshHint(store: ObjectStore, table: string, version: number): Promise<void> {
  const key = `${table}/metadata/version-hint.text`;
  const hint = await store.get(key);
  if (hint?.body.toString('utf8').trim() === String(version)) return;
  await store.put(key, String(version), { contentType: 'text/plain' });
}
