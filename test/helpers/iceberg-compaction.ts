import { tableCompaction } from '../../src/iceberg/compaction.js';
import { committedTables } from '../../src/iceberg/index.js';
import { loadJob } from '../../src/job/index.js';
import { silentLogger } from '../../src/log.js';
import { jobTables } from '../../src/run/tables.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import type { CompactionTables } from '../../src/state/compact.js';
import type { ObjectStore } from '../../src/store/store.js';

/** What `insight-export compact` hands compactJob for an Iceberg destination: the job's tables with their field ids. */
export async function compactionTables(store: ObjectStore, jobFile: string): Promise<CompactionTables> {
  const job = await loadJob(jobFile);
  const tables = await committedTables(store, job.name, await jobTables(job));
  return tableCompaction({ store, tables, partitioning: DEFAULT_PARTITIONING, compression: 'zstd', logger: silentLogger });
}
