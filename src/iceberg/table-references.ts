/**
 * What names a file of an Iceberg table, for the commands that delete its history
 * (expire-snapshots, remove-orphan-files): a snapshot names its manifest list, the manifests the
 * list holds, the data files those manifests hold as ADDED or EXISTING (a DELETED entry records a
 * removal: the snapshot does not read that file), and the files its summary names under
 * `insight-export.*-file` properties; the state names its completed windows' files and the files
 * its pending markers are about to upload or replace.
 */
import type { ObjectStore } from '../store/store.js';
import type { WindowState } from '../state/window-state.js';
import { decodeManifest, decodeManifestList, ENTRY_STATUS } from './avro-files.js';
import { keyOf } from './snapshot-manifests.js';
import { IcebergMetadataError } from './errors.js';
import type { Snapshot } from './table-metadata.js';

/** Summary properties whose value is a file of the snapshot (e.g. `insight-export.windows-file`). */
const SUMMARY_FILE_PROPERTY = /^insight-export\..+-file$/;

/** The files one snapshot names, as store keys. */
export interface SnapshotFiles {
  manifestList: string;
  manifests: string[];
  /** Data files the snapshot reads (ADDED or EXISTING entries). */
  dataFiles: string[];
  /** Data files its manifests record as DELETED (read by no one through this snapshot). */
  deletedDataFiles: string[];
  summaryFiles: string[];
}

/** Reads what snapshots name, each manifest once however many snapshots carry it. */
export class SnapshotFilesReader {
  /** Each manifest's data files by status; null: the manifest is missing. */
  private readonly manifests = new Map<string, Promise<{ live: string[]; deleted: string[] } | null>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly rootUri: string,
  ) {}

  /**
   * The snapshot's files; a manifest list or manifest that is missing throws (IcebergMetadataError),
   * unless `missingOk`: then what could be read (null: not even its list).
   */
  async files(snapshot: Snapshot, opts: { missingOk?: boolean } = {}): Promise<SnapshotFiles | null> {
    const manifestList = keyOf(this.rootUri, snapshot['manifest-list'], 'manifest list');
    const summaryFiles = summaryFileKeys(snapshot, this.rootUri);
    const body = (await this.store.get(manifestList))?.body;
    if (!body) return missing(manifestList, opts.missingOk);
    const manifests = (await decodeManifestList(body)).map((m) => keyOf(this.rootUri, m.manifest_path, manifestList));
    const dataFiles: string[] = [];
    const deletedDataFiles: string[] = [];
    for (const key of manifests) {
      const entries = await this.manifestFiles(key);
      if (!entries) {
        missing(key, opts.missingOk);
        continue;
      }
      dataFiles.push(...entries.live);
      deletedDataFiles.push(...entries.deleted);
    }
    return { manifestList, manifests, dataFiles, deletedDataFiles, summaryFiles };
  }

  /** Every file the snapshots name, added to `into` (a snapshot that cannot be read throws: what it names is unknown). */
  async addNamedBy(snapshots: readonly Snapshot[], into: Set<string>): Promise<Set<string>> {
    for (const s of snapshots) {
      const f = (await this.files(s))!;
      for (const k of [f.manifestList, ...f.manifests, ...f.dataFiles, ...f.summaryFiles]) into.add(k);
    }
    return into;
  }

  private manifestFiles(key: string): Promise<{ live: string[]; deleted: string[] } | null> {
    let read = this.manifests.get(key);
    if (!read) {
      read = (async () => {
        const obj = await this.store.get(key);
        if (!obj) return null;
        const out = { live: [] as string[], deleted: [] as string[] };
        for (const e of await decodeManifest(obj.body)) {
          (e.status === ENTRY_STATUS.deleted ? out.deleted : out.live).push(keyOf(this.rootUri, e.data_file.file_path, key));
        }
        return out;
      })();
      this.manifests.set(key, read);
    }
    return read;
  }
}

function missing(key: string, ok = false): null {
  if (ok) return null;
  throw new IcebergMetadataError(key, 'missing');
}

/** The files a snapshot's summary names (values under this destination only). */
export function summaryFileKeys(snapshot: Snapshot, rootUri: string): string[] {
  return Object.entries(snapshot.summary)
    .filter(([property, value]) => SUMMARY_FILE_PROPERTY.test(property) && value.startsWith(`${rootUri}/`))
    .map(([, value]) => keyOf(rootUri, value, 'snapshot summary'));
}

/** Every key the job's state names: its completed windows' files and its pending markers' keys. */
export async function stateFileKeys(state: WindowState): Promise<Set<string>> {
  const out = await state.pendingFileKeys();
  for await (const rec of state.completedRecords()) for (const f of rec.files) out.add(f.key);
  return out;
}
