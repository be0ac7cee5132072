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
import { jobTables } from '../run/tables.js';
import { RetireRefusedError, type RetiringTables } from '../state/removed-streams.js';
import { WindowState } from '../state/window-state.js';
import type { ObjectStore } from '../store/store.js';

/**
 * What the removal checks and commits. Called before its first write: what the commit needs is
 * read here (the tables' columns, each table through the catalog), so a refusal or an unreachable
 * catalog stops the command before any state is deleted. `job` has its wallet names resolved.
 */
export async function icebergRetirement(
  job: Job,
  config: ResolvedConfig,
  logger: Logger,
  run: { store: ObjectStore; runId: string },
): Promise<{ tables: RetiringTables; commits: TableCommitted[] }> {
  const iceberg = await import('../iceberg/index.js');
  const tableOf = iceberg.keyReader(config.output.partitioning);
  const own = await jobTables(job);
  const names = new Set(own.map((t) => t.name));
  const committed = await iceberg.committedTables(run.store, job.name, own);
  const catalog = iceberg.catalogOfConfig(config, job.name);
  if (catalog) for (const t of own) await iceberg.catalogTable(catalog, t.name);
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
      const state = new WindowState(run.store, job.name, { runId: run.runId, dropReplaced: iceberg.keepReplacedFiles });
      const { partitioning, compression } = config.output;
      commits.push(
        ...(await iceberg.commitIcebergTables({
          store: run.store,
          state,
          tables: committed,
          partitioning,
          compression,
          runId: run.runId,
          logger,
          catalog,
        })),
      );
    },
  };
  return { tables, commits };
}
