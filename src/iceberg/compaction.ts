/**
 * What `insight-export compact` (src/state/compact.ts) does differently for an Iceberg destination:
 * the merged files carry the table's field ids (by column name, from its current schema), the
 * files they replace stay (older snapshots name them), and the tables are committed around the
 * merges: first caught up with the state (what a crashed run or compaction left uncommitted), then
 * one `replace` snapshot per table whose files the merges changed. Readers of the table see the
 * old files or the merged ones, never both nor neither. With output.catalog.uri the schema is the
 * catalog's table's and each commit goes through the catalog.
 */
import type { Logger } from '../log.js';
import type { CompactionTables, MergedField } from '../state/compact.js';
import type { ObjectStore } from '../store/store.js';
import { IcebergMetadataError } from './errors.js';
import { commitIcebergTables, keepReplacedFiles, readCurrentVersion, type IcebergCommitOptions } from './index.js';
import { keyReader } from './table-schema.js';
import type { TableCatalog } from './catalog-commit.js';
import { loadCatalogTable } from './catalog-history.js';
import { destinationUri } from './destination-uri.js';

export interface TableCompactionOptions {
  store: ObjectStore;
  tables: IcebergCommitOptions['tables'];
  partitioning: string;
  compression: string;
  logger: Logger;
  guard?: (() => void) | undefined;
  /** The catalog the tables are committed through (output.catalog.uri): the schema read from it, the replace committed through it. */
  catalog?: TableCatalog | null | undefined;
}

/** What compaction (src/state/compact.ts) does for an Iceberg destination. */
export function tableCompaction(o: TableCompactionOptions): CompactionTables {
  const tableOf = keyReader(o.partitioning);
  const fields = new Map<string, Promise<MergedField[]>>();
  const readFields = async (table: string): Promise<MergedField[]> => {
    const current = o.catalog
      ? await loadCatalogTable(o.catalog, table, destinationUri(o.store))
      : await readCurrentVersion(o.store, table);
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
        catalog: o.catalog,
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
