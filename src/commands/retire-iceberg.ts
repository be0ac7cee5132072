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
    async check(files) {
      const gone = [...new Set(files.flatMap((f) => tableOf(f)?.table ?? []))].filter((t) => !names.has(t)).sort();
      // A table dropped (as the refusal says) no longer stops the removal: its files went with it.
      const standing = [];
      for (const t of gone)
        if (catalog ? (await iceberg.catalogTable(catalog, t)) !== null : (await iceberg.readCurrentVersion(run.store, t)) !== null)
          standing.push(t);
      if (standing.length > 0) throw onlyWriters(job, standing, run.store.location, catalog?.namespace.join('.') ?? null);
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

/** The refusal for tables the job no longer writes whose only writers are the streams to retire, with the commands that finish it. */
function onlyWriters(job: Job, tables: readonly string[], location: string, namespace: string | null): RetireRefusedError {
  const folders = tables.map((t) => `${location.replace(/\/$/, '')}/${t}/`);
  const drop = namespace ? `drop ${tables.map((t) => `${namespace}.${t}`).join(', ')} in the catalog (e.g. DROP TABLE ... PURGE), ` : '';
  return new RetireRefusedError(`The streams to retire are the only writers of Iceberg table(s) ${tables.join(', ')}`, {
    details: `job ${job.name} no longer writes ${tables.join(', ')}: no commit of the job's tables would drop their files`,
    hint: `Keep them: insight-export retire <job file> --keep. Or remove the table(s): ${drop}delete ${folders.join(', ')} (aws s3 rm --recursive, or rm -r), then insight-export retire <job file> --delete again.`,
  });
}
