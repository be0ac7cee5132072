/**
 * What `insight-export compact` (src/state/compact.ts) does differently for an Iceberg destination:
 * the merged files carry the table's field ids (by column name, from its current schema), the
 * files they replace stay (older snapshots name them), and the tables are committed around the
 * merges: first caught up with the state (what a crashed run or compaction left uncommitted), then
 * one `replace` snapshot per table whose files the merges changed. Readers of the table see the
 * old files or the merged ones, never both nor neither.
 */
import type { Logger } from '../log.js';
import type { WindowState } from '../state/window-state.js';
import type { ObjectStore } from '../store/store.js';
import type { TableCommitted } from './commit-table.js';
import { IcebergMetadataError } from './errors.js';
import { commitIcebergTables, keepReplacedFiles, readCurrentVersion, type IcebergCommitOptions } from './index.js';
import { keyReader } from './table-schema.js';

export interface TableCompactionOptions {
  store: ObjectStore;
  tables: IcebergCommitOptions['tables'];
  partitioning: string;
  compression: string;
  logger: Logger;
  guard?: (() => void) | undefined;
}

/** A column of a table's current schema: its name, Iceberg field id and type. */
export interface TableField {
  name: string;
  id: number;
  type: string;
}

export interface TableCompaction {
  /** What becomes of the files merged windows replace: kept (WindowState's dropReplaced). */
  dropReplaced: (keys: string[]) => Promise<void>;
  /**
   * Each table made to list the state's live files. Without `operation`, before merging: the
   * operation follows from what changed. With 'replace', after merging: refused if it would change
   * the table's rows.
   */
  commit(state: WindowState, runId: string, operation?: 'replace'): Promise<TableCommitted[]>;
  /** The current schema's fields of the table a data file belongs to (read once per table). */
  fieldsOf(key: string): Promise<TableField[]>;
}

export function tableCompaction(o: TableCompactionOptions): TableCompaction {
  const tableOf = keyReader(o.partitioning);
  const fields = new Map<string, Promise<TableField[]>>();
  const readFields = async (table: string): Promise<TableField[]> => {
    const current = await readCurrentVersion(o.store, table);
    const schema = current?.meta.schemas.find((s) => s['schema-id'] === current.meta['current-schema-id']);
    if (!schema) throw new IcebergMetadataError(`${table}/metadata/`, 'no current schema (the table was never committed)');
    return schema.fields.map((f) => ({ name: f.name, id: f.id, type: f.type }));
  };
  return {
    dropReplaced: keepReplacedFiles,
    commit: (state, runId, operation) =>
      commitIcebergTables({
        store: o.store,
        state,
        tables: o.tables,
        partitioning: o.partitioning,
        compression: o.compression,
        runId,
        operation,
        logger: o.logger,
        guard: o.guard,
      }),
    fieldsOf: (key) => {
      const table = tableOf(key)?.table;
      if (table === undefined) return Promise.reject(new IcebergMetadataError(key, 'not a data file of a table'));
      let read = fields.get(table);
      if (!read) fields.set(table, (read = readFields(table)));
      return read;
    },
  };
}
