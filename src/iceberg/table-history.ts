/** What expire-snapshots and remove-orphan-files share: their options and the head of their reports. */
import type { Logger } from '../log.js';
import type { WindowState } from '../state/window-state.js';
import type { ObjectStore } from '../store/store.js';
import type { TableCatalog } from './catalog-commit.js';

export interface TableHistoryOptions {
  store: ObjectStore;
  /** The job's state: the files it names stay, whatever the table says. */
  state: WindowState;
  tables: readonly string[];
  /** output.snapshot_retention: snapshots committed, and unnamed files last modified, longer ago than this go. */
  retentionMs: number;
  /** The clock (default Date.now). */
  now?: (() => number) | undefined;
  /** Writes and deletes nothing; the report says what would go. */
  dryRun?: boolean | undefined;
  logger: Logger;
  /** Called before each write and before the deletes; throws to stop (a lost lease). */
  guard?: (() => void) | undefined;
  /** The catalog the tables are committed through (output.catalog.uri): each is read from it, an expiry committed through it. */
  catalog?: TableCatalog | null | undefined;
}

export interface TableHistoryReport<T> {
  dry_run: boolean;
  retention_ms: number;
  /** What was committed or last modified before this instant goes. */
  cutoff: string;
  tables: T[];
}

/** The report's head; `cutoff`: the clock's now - retention. */
export function historyReport<T>(o: TableHistoryOptions, cutoff: number, tables: T[]): TableHistoryReport<T> {
  return { dry_run: o.dryRun === true, retention_ms: o.retentionMs, cutoff: new Date(cutoff).toISOString(), tables };
}
