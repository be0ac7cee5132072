/**
 * Iceberg tables as a projection of the state (`output.format: iceberg`): after a run's windows
 * are committed and folded, each table of the job gets one commit that makes its current snapshot
 * list exactly the data files the state lists as live. The state stays the record of what is
 * exported; a crash between the two leaves the previous snapshot current, and the next run's
 * commit catches the table up. Files of replaced windows are kept (older snapshots name them).
 */
import type { Column } from '../columns/columns.js';
import type { Logger } from '../log.js';
import { ICEBERG_DATA_EXTENSION } from '../sink/formats.js';
import type { ObjectStore } from '../store/store.js';
import { isCompactionRunId } from '../state/run-id.js';
import type { WindowState } from '../state/window-state.js';
import { commitTable, readCurrentVersion, type LiveFile, type TableCommitted } from './commit-table.js';
import { destinationUri } from './destination-uri.js';
import { keyReader } from './table-schema.js';

export { IcebergCommitConflictError, IcebergMetadataError, IcebergReplaceChangesRowsError, IcebergTableRefusedError } from './errors.js';
export { MAX_COMMIT_ATTEMPTS, metadataKey, readCurrentVersion, readSnapshotManifests, type TableCommitted } from './commit-table.js';
export { keyReader, partitionSpec, tableSchema } from './table-schema.js';
export { destinationUri } from './destination-uri.js';
export { verifyIcebergTables, type IcebergTableProblem, type IcebergVerifyReport } from './verify-tables.js';

/** Throws when the output layout cannot hold Iceberg tables (before a run writes anything). */
export function checkIcebergLayout(partitioning: string): void {
  keyReader(partitioning);
}

/** Files of replaced windows stay: the table's older snapshots still name them (an expiry step removes them). */
export const keepReplacedFiles = async (): Promise<void> => undefined;

export interface IcebergCommitOptions {
  store: ObjectStore;
  state: WindowState;
  /** The job's tables and their columns. */
  tables: readonly { name: string; columns: readonly Column[] }[];
  partitioning: string;
  compression: string;
  runId: string;
  /** 'replace' (compaction): see TableCommitInput.operation. */
  operation?: 'replace' | undefined;
  logger: Logger;
  guard?: (() => void) | undefined;
}

/** Per table: its live files, its windows, and the windows the run committed. */
interface TableFiles {
  files: LiveFile[];
  windows: number;
  runWindows: number;
}

async function liveFilesByTable(state: WindowState, partitioning: string, runId: string): Promise<Map<string, TableFiles>> {
  const read = keyReader(partitioning);
  const out = new Map<string, TableFiles>();
  for await (const rec of state.completedRecords()) {
    const tables = new Set<string>();
    for (const f of rec.files) {
      if (!f.key.endsWith(ICEBERG_DATA_EXTENSION)) continue;
      const place = read(f.key);
      if (!place) continue;
      let t = out.get(place.table);
      if (!t) out.set(place.table, (t = { files: [], windows: 0, runWindows: 0 }));
      t.files.push({ key: f.key, rows: f.rows, bytes: f.bytes, partition: place.values, compacted: isCompactionRunId(rec.run_id) });
      tables.add(place.table);
    }
    for (const table of tables) {
      const t = out.get(table)!;
      t.windows++;
      if (rec.run_id === runId) t.runWindows++;
    }
  }
  return out;
}

/** One commit per table of the job whose snapshot differs from the state; what was committed. */
export async function commitIcebergTables(o: IcebergCommitOptions): Promise<TableCommitted[]> {
  // The state is read after the tables: a commit on top of a version holds every window committed
  // before it, so it never takes out files another writer (a shard) committed. One read serves every
  // table still at the version read before it; an attempt on a newer version reads the state again.
  const before = new Map(
    await Promise.all(o.tables.map(async (t) => [t.name, (await readCurrentVersion(o.store, t.name))?.version ?? 0] as const)),
  );
  const shared = liveFilesByTable(o.state, o.partitioning, o.runId);
  const rootUri = destinationUri(o.store);
  const committed: TableCommitted[] = [];
  for (const table of o.tables) {
    const done = await commitTable({
      store: o.store,
      table: table.name,
      rootUri,
      columns: table.columns,
      partitioning: o.partitioning,
      compression: o.compression,
      contents: async (version) => {
        const byTable = await (version === before.get(table.name) ? shared : liveFilesByTable(o.state, o.partitioning, o.runId));
        const t = byTable.get(table.name) ?? { files: [], windows: 0, runWindows: 0 };
        return {
          files: t.files,
          summary: {
            'insight-export.run-id': o.runId,
            'insight-export.run-windows': String(t.runWindows),
            'insight-export.windows': String(t.windows),
          },
        };
      },
      operation: o.operation,
      logger: o.logger,
      guard: o.guard,
    });
    if (done) {
      committed.push(done);
      o.logger.info({ ...done }, 'Iceberg table committed');
    }
  }
  return committed;
}
