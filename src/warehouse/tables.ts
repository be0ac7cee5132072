import { DATASETS } from '../datasets/index.js';
import { InsightExportError } from '../errors.js';
import type { Job } from '../job/schema.js';
import { unitSpecs } from '../plan/plan.js';
import { TargetFactory } from '../run/targets.js';
import type { TableSpec } from './ddl.js';

export class TableSchemaConflictError extends InsightExportError {
  override name = 'TableSchemaConflictError';
}

/**
 * The tables a job writes, with the columns the dataset modules declare for its targets (the same
 * objects the writers get). Targets that share a table (wallets -> transactions) are merged by
 * column name; a column with two types is an error.
 */
export async function jobTables(job: Job): Promise<TableSpec[]> {
  const factory = new TargetFactory(job);
  const byName = new Map<string, TableSpec>();
  for (const spec of unitSpecs(job)) {
    const ds = DATASETS[spec.dataset];
    const target = await factory.forDataset({ dataset: spec.dataset, target: spec.target, filters: spec.filters });
    const name = ds.tableName(target);
    const columns = ds.columns(target);
    const known = byName.get(name);
    if (!known) {
      byName.set(name, { name, dataset: spec.dataset, columns: [...columns] });
      continue;
    }
    for (const c of columns) {
      const same = known.columns.find((k) => k.name === c.name);
      if (!same) known.columns.push(c);
      else if (same.type !== c.type) {
        throw new TableSchemaConflictError(`Table ${name} gets column ${c.name} as both ${same.type} and ${c.type}`, {
          details: `job ${job.name}, unit ${spec.unitKey}`,
        });
      }
    }
  }
  return [...byName.values()];
}
