/**
 * `verify` of an Iceberg destination: each table's current snapshot lists exactly the state's live
 * files with their row counts, every file it lists exists, and the files only older snapshots
 * name are the table's history, not leftovers.
 */
import type { ObjectStore } from '../store/store.js';
import type { WindowState } from '../state/window-state.js';
import { ICEBERG_DATA_EXTENSION } from '../sink/formats.js';
import { ENTRY_STATUS } from './avro-files.js';
import { keyOf, readCurrentVersion, readManifests } from './commit-table.js';
import { destinationUri } from './destination-uri.js';
import { currentSnapshot } from './table-metadata.js';

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
}): Promise<IcebergVerifyReport> {
  const { store } = o;
  const rootUri = destinationUri(store);
  const live = new Map<string, number>();
  for await (const rec of o.state.completedRecords(() => undefined))
    for (const f of rec.files) if (f.key.endsWith(ICEBERG_DATA_EXTENSION)) live.set(f.key, f.rows);
  const report: IcebergVerifyReport = { retained: new Set(), problems: [] };
  for (const table of o.tables) {
    const ofTable = [...live].filter(([k]) => k.startsWith(`${table}/`));
    const current = await readCurrentVersion(store, table);
    if (!current) {
      if (ofTable.length > 0)
        report.problems.push({
          table,
          message: `no snapshot yet, the state lists ${ofTable.length} file(s): the next run commits the table`,
        });
      continue;
    }
    const head = currentSnapshot(current.meta);
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
    for (const [key] of ofTable)
      if (!listed.has(key))
        report.problems.push({
          table,
          key,
          message: 'a completed window lists this file, the current snapshot does not: the next run commits the table',
        });
  }
  return report;
}
