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
import type { WindowRecord, WindowState } from '../state/window-state.js';
import { catalogTable, catalogTableVersion, commitThroughCatalog, type TableCatalog } from './catalog-commit.js';
import type { LoadedTable } from './catalog/index.js';
import {
  commitTable,
  readCurrentVersion,
  type LiveFile,
  type TableCommitInput,
  type TableCommitted,
  type TableContents,
} from './commit-table.js';
import {
  completeBefore,
  encodeWindows,
  snapshotWindow,
  WINDOWS_DIGEST_PROPERTY,
  WINDOWS_FILE_PROPERTY,
  WINDOWS_FILE_SUFFIX,
} from './snapshot-windows.js';
import { destinationUri, keyUri } from './destination-uri.js';
import { committedColumns } from './field-ids.js';
import { keyReader, type TableColumn } from './table-schema.js';

export { IcebergCommitConflictError, IcebergMetadataError, IcebergReplaceChangesRowsError, IcebergTableRefusedError } from './errors.js';
export { MAX_COMMIT_ATTEMPTS, metadataKey, readCurrentVersion, readSnapshotManifests, type TableCommitted } from './commit-table.js';
export { keyReader, partitionSpec, tableSchema } from './table-schema.js';
export { committedColumns, settleIcebergColumns, tableFieldIds } from './field-ids.js';
export { destinationUri } from './destination-uri.js';
export { catalogOfConfig } from './catalog/catalog-of-config.js';
export { catalogTable } from './catalog-commit.js';
export type { TableCatalog } from './catalog-commit.js';
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
  /** The job's tables, their columns with field ids (committedColumns), and the units whose windows each holds (windows without files included). */
  tables: readonly { name: string; columns: readonly TableColumn[]; units: readonly string[] }[];
  partitioning: string;
  compression: string;
  runId: string;
  /** 'replace' (compaction): see TableCommitInput.operation. */
  operation?: 'replace' | undefined;
  logger: Logger;
  guard?: (() => void) | undefined;
  /** The catalog the tables are committed through (output.catalog.uri); without it, metadata files only. */
  catalog?: TableCatalog | null | undefined;
}

/** Per table: its live files and the completed windows they belong to. */
interface TableState {
  files: LiveFile[];
  windows: WindowRecord[];
}

/**
 * The state's completed windows by table: a window with files belongs to the table of its files'
 * folder, a window without rows to its unit's table (the job's, or where the unit's other windows
 * are: a job whose wallet names are not resolved here, as in compaction, names its units otherwise).
 */
async function stateByTable(o: IcebergCommitOptions): Promise<Map<string, TableState>> {
  const read = keyReader(o.partitioning);
  const tableOfStream = new Map(o.tables.flatMap((t) => t.units.map((u) => [u, t.name] as const)));
  const out = new Map<string, TableState>();
  const of = (table: string) => {
    let t = out.get(table);
    if (!t) out.set(table, (t = { files: [], windows: [] }));
    return t;
  };
  // The unit's windows without rows whose table its windows with files tell (records come unit by unit).
  const unit = { key: '', table: undefined as string | undefined, rowless: [] as WindowRecord[] };
  const endStream = () => {
    if (unit.table !== undefined) of(unit.table).windows.push(...unit.rowless);
  };
  for await (const rec of o.state.completedRecords()) {
    if (unit.key !== rec.unit_key) {
      endStream();
      Object.assign(unit, { key: rec.unit_key, table: tableOfStream.get(rec.unit_key), rowless: [] });
    }
    let table: string | undefined;
    for (const f of rec.files) {
      if (!f.key.endsWith(ICEBERG_DATA_EXTENSION)) continue;
      const place = read(f.key);
      if (!place) continue;
      of(place.table).files.push({
        key: f.key,
        rows: f.rows,
        bytes: f.bytes,
        partition: place.values,
        compacted: isCompactionRunId(rec.run_id),
      });
      table = place.table;
    }
    if (table !== undefined) {
      of(table).windows.push(rec);
      unit.table ??= table;
    } else if (rec.files.length === 0) unit.rowless.push(rec);
  }
  endStream();
  return out;
}

/** What a table's snapshot holds of the state: its files, and its windows in a file the snapshot names. */
function tableContents(t: TableState, uri: (key: string) => string, runId: string): TableContents {
  const windows = t.windows.map((w) => snapshotWindow(w, uri)).sort((a, b) => a.unit.localeCompare(b.unit) || a.start - b.start);
  const encoded = encodeWindows(windows);
  return {
    files: t.files,
    summary: {
      'insight-export.run-id': runId,
      'insight-export.run-windows': String(t.windows.filter((w) => w.run_id === runId).length),
      'insight-export.windows': String(windows.length),
      ...completeBefore(windows),
    },
    ...(windows.length > 0
      ? {
          sidecars: [{ property: WINDOWS_FILE_PROPERTY, suffix: WINDOWS_FILE_SUFFIX, body: encoded.body }],
          digest: { property: WINDOWS_DIGEST_PROPERTY, value: encoded.sha256 },
        }
      : {}),
  };
}

/** The job's tables as commits take them: columns with the field ids the tables' records keep, and each table's units. */
export async function committedTables(
  store: ObjectStore,
  jobName: string,
  tables: readonly { name: string; columns: readonly Column[]; units: readonly string[] }[],
): Promise<IcebergCommitOptions['tables']> {
  const committed = await committedColumns(store, jobName, tables);
  return committed.map((t, i) => ({ ...t, units: tables[i]!.units }));
}

/** One commit per table of the job whose snapshot differs from the state; what was committed. */
export async function commitIcebergTables(o: IcebergCommitOptions): Promise<TableCommitted[]> {
  // The state is read after the tables: a commit on top of a version holds every window committed
  // before it, so it never takes out files another writer (a shard) committed. One read serves every
  // table still at the version read before it; an attempt on a newer version reads the state again.
  const catalog = o.catalog ?? null;
  // Through a catalog, the table loaded here is the one the first commit attempt takes (one load per attempt).
  const loadedFirst = new Map<string, LoadedTable | null>();
  const versionOf = async (table: string) => {
    if (!catalog) return (await readCurrentVersion(o.store, table))?.version ?? 0;
    const loaded = await catalogTable(catalog, table);
    loadedFirst.set(table, loaded);
    return catalogTableVersion(loaded);
  };
  const before = new Map(await Promise.all(o.tables.map(async (t) => [t.name, await versionOf(t.name)] as const)));
  const shared = stateByTable(o);
  // Awaited by the first attempt at the version read above; when every table moved on first (or
  // there is none), nobody awaits it, and its failure must not end the process as unhandled.
  shared.catch(() => undefined);
  const rootUri = destinationUri(o.store);
  const uri = (key: string) => keyUri(rootUri, key);
  const committed: TableCommitted[] = [];
  for (const table of o.tables) {
    const input: TableCommitInput = {
      store: o.store,
      table: table.name,
      rootUri,
      columns: table.columns,
      partitioning: o.partitioning,
      compression: o.compression,
      contents: async (version) => {
        const byTable = await (version === before.get(table.name) ? shared : stateByTable(o));
        return tableContents(byTable.get(table.name) ?? { files: [], windows: [] }, uri, o.runId);
      },
      operation: o.operation,
      logger: o.logger,
      guard: o.guard,
    };
    const done = catalog ? await commitThroughCatalog(input, catalog, loadedFirst.get(table.name)) : await commitTable(input);
    // What the catalog answered on the way (run report and metrics).
    const answers = catalog?.client.takeCommitAnswers({ namespace: catalog.namespace, name: table.name });
    if (done?.catalog && answers) done.catalog = { ...done.catalog, conflicts: answers.conflicts, unknown_answers: answers.unknown };
    if (done) {
      committed.push(done);
      o.logger.info({ ...done }, 'Iceberg table committed');
    }
  }
  return committed;
}
