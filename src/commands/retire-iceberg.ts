/**
 * `retire --delete` of an Iceberg job: the retired streams' rows leave the tables. The job's tables
 * are committed once the streams' state is deleted, each as the state's live files (as a run
 * commits them), so each table's new snapshot drops their data files; the files stay for the older
 * snapshots that name them (expire-snapshots, then remove-orphan-files, remove them).
 */
import type { ResolvedConfig } from '../config/index.js';
import type { TableCommitted } from '../iceberg/index.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { commitTablesAfterWorkers } from '../run/iceberg-commits.js';
import { jobTables } from '../run/tables.js';
import { RetireRefusedError, type RetiringTables } from '../state/removed-streams.js';

export async function icebergRetirement(
  job: Job,
  config: ResolvedConfig,
  logger: Logger,
  runId: string,
): Promise<{ tables: RetiringTables; commits: TableCommitted[] }> {
  const { keyReader } = await import('../iceberg/index.js');
  const tableOf = keyReader(config.output.partitioning);
  const names = new Set((await jobTables(job)).map((t) => t.name));
  const commits: TableCommitted[] = [];
  const tables: RetiringTables = {
    check(files) {
      const gone = [...new Set(files.flatMap((f) => tableOf(f)?.table ?? []))].filter((t) => !names.has(t)).sort();
      if (gone.length > 0)
        throw new RetireRefusedError(`The streams to retire are the only writers of Iceberg table(s) ${gone.join(', ')}`, {
          details: `job ${job.name} no longer writes ${gone.join(', ')}: no commit of the job's tables would drop their files`,
          hint: 'Keep them (retire --keep), or drop those tables with your catalog or query engine.',
        });
    },
    async commit() {
      commits.push(...(await commitTablesAfterWorkers({ job, config, logger }, runId)));
    },
  };
  return { tables, commits };
}
