/**
 * `output.format: iceberg`: the commits of a job's tables, each making each table list the state's
 * live files (src/iceberg/): during and at the end of a run, and once after `run --workers`.
 */
import type { ResolvedConfig } from '../config/index.js';
import type { TableCommitted } from '../iceberg/index.js';
import type { Job } from '../job/schema.js';
import type { Logger } from '../log.js';
import { WindowState } from '../state/window-state.js';
import { openStore } from '../store/open-store.js';
import type { ObjectStore } from '../store/store.js';
import type { RunJobInput } from './run-context.js';
import { withWalletAddresses } from './retire-wallets.js';
import { jobTables } from './tables.js';

/**
 * `output.format: iceberg`: what commits the tables, each time making each table list the state's
 * live files (src/iceberg/). A shard commits too, on top of the other shards' commits.
 */
export function icebergCommit(
  iceberg: typeof import('../iceberg/index.js'),
  c: { config: ResolvedConfig; logger: Logger; job: Job; store: ObjectStore; state: WindowState; runId: string; guard?: () => void },
): () => Promise<TableCommitted[]> {
  // The columns with their field ids as the tables' records keep them (recorded before any file), and each table's units.
  const tablesOf = async () => iceberg.committedTables(c.store, c.job.name, await jobTables(c.job));
  let tables: ReturnType<typeof tablesOf> | null = null;
  // With output.catalog.uri the tables are committed through the catalog (created there when missing).
  const catalog = iceberg.catalogOfConfig(c.config, c.job.name);
  return async () =>
    iceberg.commitIcebergTables({
      store: c.store,
      state: c.state,
      tables: await (tables ??= tablesOf()),
      partitioning: c.config.output.partitioning,
      compression: c.config.output.compression,
      runId: c.runId,
      logger: c.logger,
      guard: c.guard,
      catalog,
    });
}

/**
 * `run --workers`: the one commit of the job's Iceberg tables once every worker has ended (the
 * workers commit none), under the parent's run id; wallet names are resolved as a run resolves them
 * (the source opened only for them: `retire --delete` passes a job resolved before its first write).
 */
export async function commitTablesAfterWorkers(
  input: Pick<RunJobInput, 'job' | 'config' | 'logger'>,
  runId: string,
): Promise<TableCommitted[]> {
  const iceberg = await import('../iceberg/index.js');
  const job = await withWalletAddresses(input.job, input.config, input.logger, "the tables' commit");
  const store = await openStore(input.config.output.destination!, { s3: input.config.s3, logger: input.logger });
  try {
    const state = new WindowState(store, job.name, { runId, dropReplaced: iceberg.keepReplacedFiles });
    return await icebergCommit(iceberg, { ...input, job, store, state, runId })();
  } finally {
    await store.close?.();
  }
}
