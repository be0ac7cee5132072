/**
 * `verify` of an Iceberg destination: each table's current snapshot lists exactly the state's live
 * files with their row counts, every file it lists exists, and the files only older snapshots
 * name are the table's history, not leftovers. With output.catalog.uri each table is the one the
 * catalog serves; a table whose current snapshot is not what the state expects is named once more
 * with the snapshot the catalog serves and what to do.
 */
import type { ObjectStore } from '../store/store.js';
import type { WindowRecord, WindowState } from '../state/window-state.js';
import { ICEBERG_DATA_EXTENSION } from '../sink/formats.js';
import { ENTRY_STATUS } from './avro-files.js';
import { keyOf, readManifests } from './snapshot-manifests.js';
import { readCurrentVersion } from './table-versions.js';
import type { TableCatalog } from './catalog-commit.js';
import { loadCatalogTable, type CurrentTable } from './catalog-history.js';
import { destinationUri } from './destination-uri.js';
import { decodeWindows, WINDOWS_FILE_PROPERTY } from './snapshot-windows.js';
import { currentSnapshot, type Snapshot } from './table-metadata.js';

export interface IcebergTableProblem {
  table: string;
  key?: string;
  message: string;
}

export interface IcebergVerifyReport {
  /** Data files some snapshot of a table names (kept for readers of older snapshots). */
  retained: Set<string>;
  problems: IcebergTableProblem[];
}

export async function verifyIcebergTables(o: {
  store: ObjectStore;
  state: WindowState;
  tables: readonly string[];
  /** The catalog the tables are committed through (output.catalog.uri): each table is loaded from it. */
  catalog?: TableCatalog | null | undefined;
}): Promise<IcebergVerifyReport> {
  const { store } = o;
  const rootUri = destinationUri(store);
  const live = new Map<string, number>();
  const windows = new Map<string, WindowRecord>();
  for await (const rec of o.state.completedRecords(() => undefined)) {
    windows.set(windowId(rec.unit_key, rec.start, rec.end), rec);
    for (const f of rec.files) if (f.key.endsWith(ICEBERG_DATA_EXTENSION)) live.set(f.key, f.rows);
  }
  const report: IcebergVerifyReport = { retained: new Set(), problems: [] };
  for (const table of o.tables) {
    const ofTable = [...live].filter(([k]) => k.startsWith(`${table}/`));
    const current = o.catalog ? await loadCatalogTable(o.catalog, table, rootUri) : await readCurrentVersion(store, table);
    if (!current) {
      if (ofTable.length > 0) report.problems.push({ table, message: noTableMessage(o.catalog, table, ofTable.length) });
      continue;
    }
    const head = currentSnapshot(current.meta);
    const before = report.problems.length;
    for (const snapshot of current.meta.snapshots) {
      for (const m of await readManifests(store, rootUri, snapshot)) {
        for (const e of m.entries) report.retained.add(keyOf(rootUri, e.data_file.file_path, current.key));
      }
    }
    const listed = new Map<string, number>();
    if (head) {
      for (const m of await readManifests(store, rootUri, head)) {
        for (const e of m.entries) {
          if (e.status === ENTRY_STATUS.deleted) continue;
          const key = keyOf(rootUri, e.data_file.file_path, current.key);
          if (listed.has(key))
            report.problems.push({ table, key, message: 'listed twice by the current snapshot: readers see its rows twice' });
          listed.set(key, e.data_file.record_count);
        }
      }
    }
    for (const [key, rows] of listed) {
      if (!live.has(key))
        report.problems.push({
          table,
          key,
          message: 'the current snapshot lists a file no completed window lists: the next run commits the table again',
        });
      else if (live.get(key) !== rows)
        report.problems.push({ table, key, message: `the current snapshot counts ${rows} rows, the state ${live.get(key)}` });
      if (!(await store.head(key)))
        report.problems.push({ table, key, message: 'listed by the current snapshot but missing: readers of the table fail' });
    }
    if (head) report.problems.push(...(await checkWindows(store, table, head, listed, windows, rootUri)));
    for (const [key] of ofTable)
      if (!listed.has(key))
        report.problems.push({
          table,
          key,
          message: 'a completed window lists this file, the current snapshot does not: the next run commits the table',
        });
    // Another writer's snapshot may list the state's files; still not the snapshot the state expects.
    const foreign = head !== undefined && head.summary['insight-export.run-id'] === undefined;
    if (o.catalog && (report.problems.length > before || foreign))
      report.problems.push(catalogSnapshotProblem(o.catalog, table, current, head));
  }
  return report;
}

function noTableMessage(catalog: TableCatalog | null | undefined, table: string, files: number): string {
  if (!catalog) return `no snapshot yet, the state lists ${files} file(s): the next run commits the table`;
  return (
    `the catalog has no table ${[...catalog.namespace, table].join('.')}, the state lists ${files} file(s): ` +
    'the next run creates and commits it (or output.catalog.uri, warehouse or namespace name another catalog than the one the runs used)'
  );
}

/**
 * Through a catalog, the table's current snapshot is not the one the state expects: another writer
 * committed after the exporter (a snapshot without its run id), or the catalog lost or rolled back
 * the exporter's commit. Named with the snapshot and what to do.
 */
function catalogSnapshotProblem(
  catalog: TableCatalog,
  table: string,
  current: CurrentTable,
  head: Snapshot | undefined,
): IcebergTableProblem {
  const name = [...catalog.namespace, table].join('.');
  const at = current.loaded?.metadataLocation ?? current.key;
  const whose =
    head === undefined
      ? 'has no current snapshot'
      : head.summary['insight-export.run-id'] === undefined
        ? `serves snapshot ${head['snapshot-id']}, which another writer committed`
        : `serves snapshot ${head['snapshot-id']} of run ${head.summary['insight-export.run-id']}, which differs from the state (a lost or rolled-back commit?)`;
  return {
    table,
    message:
      `the catalog's table ${name} (${at}) ${whose}: run the job again, its commit makes the current snapshot list exactly the state ` +
      "(on top of any other writer's snapshot, which stays in the history)",
  };
}

const windowId = (unit: string, start: number, end: number) => `${unit} ${start}_${end}`;

/**
 * The snapshot's own windows (the file its summary names) against its data files and the state:
 * the windows name exactly the files the snapshot lists, and each window's rows are the state's.
 * A window the state has and the snapshot lacks is the table behind the state (the file checks say so).
 */
async function checkWindows(
  store: ObjectStore,
  table: string,
  head: Snapshot,
  listed: ReadonlyMap<string, number>,
  state: ReadonlyMap<string, WindowRecord>,
  rootUri: string,
): Promise<IcebergTableProblem[]> {
  const uri = head.summary[WINDOWS_FILE_PROPERTY];
  // Snapshots of versions before the windows file name none.
  if (uri === undefined) return [];
  const key = keyOf(rootUri, uri, `snapshot ${head['snapshot-id']}`);
  const body = await store.get(key);
  if (!body) return [{ table, key, message: "the current snapshot's windows file is missing: its windows cannot be proven" }];
  const problems: IcebergTableProblem[] = [];
  const named = new Map<string, number>();
  for (const w of decodeWindows(body.body)) {
    const window = `window ${w.start}_${w.end} of ${w.unit}`;
    for (const f of w.files) named.set(keyOf(rootUri, f.path, key), f.rows);
    const rec = state.get(windowId(w.unit, w.start, w.end));
    if (!rec)
      problems.push({
        table,
        message: `the current snapshot holds ${window}, which no completed window is: the next run commits the table again`,
      });
    else if (rec.rows !== w.rows)
      problems.push({ table, message: `${window}: the current snapshot counts ${w.rows} rows, the state ${rec.rows}` });
  }
  for (const [file, rows] of listed)
    if (named.get(file) !== rows)
      problems.push({ table, key: file, message: "listed by the current snapshot's manifests, not with these rows by its windows" });
  for (const [file] of named)
    if (!listed.has(file))
      problems.push({ table, key: file, message: "named by the current snapshot's windows, not listed by its manifests" });
  return problems;
}
