/**
 * A snapshot's manifests as stored: the manifest list and the manifests it names read back with
 * their entries, and the manifest-list entry of a manifest written.
 */
import type { ObjectStore } from '../store/store.js';
import {
  decodeManifest,
  decodeManifestList,
  ENTRY_STATUS,
  partitionSummaries,
  type ManifestEntry,
  type ManifestFile,
} from './avro-files.js';
import { IcebergMetadataError } from './errors.js';
import { currentSnapshot, type Snapshot, type TableMetadata } from './table-metadata.js';
import type { IcebergSchema, PartitionSpec } from './table-schema.js';

/** Data files a merged manifest lists at most (about 20 MB of Avro). */
const ENTRIES_PER_MERGED_MANIFEST = 100_000;

/** A manifest of the current snapshot, with its entries (sequence numbers inherited where the entry has none). */
export interface ReadManifest {
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

export function manifestFile(
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
 * The manifests a new snapshot lists: `toWrite` (one of the added entries; each current manifest
 * that loses files rewritten, kept files EXISTING, lost ones DELETED) and `carried` (current
 * manifests unchanged). Past `maxManifests` all are merged into as few as they fill.
 */
export function nextManifests(
  manifests: readonly ReadManifest[],
  added: ManifestEntry[],
  removed: ReadonlySet<string>,
  snapshotId: number,
  maxManifests: number,
): { toWrite: { entries: ManifestEntry[] }[]; carried: ReadManifest[] } {
  let newManifests: { entries: ManifestEntry[] }[] = [];
  let carried: ReadManifest[] = [];
  if (added.length > 0) newManifests.push({ entries: added });
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

  if (newManifests.length + carried.length > maxManifests) {
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
  return { toWrite: newManifests, carried };
}
