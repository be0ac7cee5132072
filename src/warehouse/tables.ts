import type { Column } from '../datasets/columns.js';
import { eventsDataset } from '../datasets/events.js';
import { transactionsDataset } from '../datasets/transactions.js';
import { InsightExportError } from '../errors.js';
import type { Job } from '../job/schema.js';
import { unitSpecs } from '../plan/plan.js';
import { TargetFactory } from '../run/targets.js';
import type { TableSpec } from './ddl.js';

export class TableSchemaConflictError extends InsightExportError {
  override name = 'TableSchemaConflictError';
}

export interface JobTables {
  tables: TableSpec[];
  /** Datasets of the job this version cannot describe (their tables are left out). */
  skipped: string[];
}

/**
 * The tables a job writes, with the columns the dataset modules declare (the same objects the
 * writers get). Targets that share a table (wallets -> transactions) are merged by column name;
 * a column with two types is an error.
 */
export async function jobTables(job: Job): Promise<JobTables> {
  const factory = new TargetFactory(job);
  const byName = new Map<string, TableSpec>();
  const skipped = new Set<string>();
  for (const spec of unitSpecs(job)) {
    let name: string;
    let columns: Column[];
    if (spec.dataset === 'transactions' || spec.dataset === 'events') {
      const target = await factory.forUnit(spec.target);
      if (spec.dataset === 'transactions' && target.kind === 'wallet') {
        name = transactionsDataset.tableName(target);
        columns = transactionsDataset.columns(target);
      } else if (spec.dataset === 'events' && target.kind === 'contract') {
        name = eventsDataset.tableName(target);
        columns = eventsDataset.columns(target);
      } else {
        continue;
      }
    } else {
      skipped.add(spec.dataset);
      continue;
    }
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
  return { tables: [...byName.values()], skipped: [...skipped] };
}
