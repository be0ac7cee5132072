import type { RemoveOrphanFilesReport } from '../iceberg/remove-orphan-files.js';
import { jobStreams } from '../plan/streams.js';
import { withWalletAddresses } from '../run/retire-wallets.js';
import { claimPartitions } from '../state/owners.js';
import type { UnreferencedFilesReport } from '../state/unreferenced-files.js';
import { tableHistoryCommand, type FilesMaintenanceInput } from './table-history.js';

type Report = RemoveOrphanFilesReport | UnreferencedFilesReport;

/**
 * Removes the job's files that nothing names. Iceberg: the files in each table's folder that no
 * snapshot, metadata file or state record names, older than the retention (src/iceberg/remove-orphan-files.ts).
 * Parquet and NDJSON: the job's data files (its folders, its targets' names) that no completed
 * window or pending commit names: what a crash, a lost `_state/` or a compaction that lost a race
 * left (src/state/unreferenced-files.ts). Refused when another job owns those partitions.
 */
export const removeOrphanFilesCommand = tableHistoryCommand<Report>({
  name: 'remove-orphan-files',
  describe:
    "Delete the job's files that nothing names: data files no completed window or pending commit lists (left by a crash, a lost _state/, a compaction that lost a race); Iceberg: also the table files no snapshot names, once older than output.snapshot_retention",
  example: ['$0 remove-orphan-files jobs/x.yaml --dry-run', 'List what crashed commits or a lost state left, deleting nothing'],
  run: async (input) => (await import('../iceberg/remove-orphan-files.js')).removeOrphanFiles(input),
  otherFormats: removeDataFiles,
  summary: (r, job) => ('tables' in r ? icebergSummary(r, job) : filesSummary(r, job)),
});

/** Parquet and NDJSON: the job's data files no state names (wallet names resolved first: files are named by address). */
async function removeDataFiles(input: FilesMaintenanceInput): Promise<UnreferencedFilesReport> {
  const job = await withWalletAddresses(input.job, input.config, input.logger, 'remove-orphan-files');
  // Another job's partitions hold its files, never this job's to remove.
  await claimPartitions(input.store, job.name, input.partitioning, jobStreams(job), { checkOnly: true });
  const { removeUnreferencedFiles } = await import('../state/unreferenced-files.js');
  return removeUnreferencedFiles({ ...input, job });
}

function filesSummary(r: UnreferencedFilesReport, job: string): string {
  const lines = [
    `${r.dry_run ? 'would remove' : 'removed'}: job ${job}, ${r.deleted.length} of its ${r.listed} data files that no completed window or pending commit names (${r.bytes} bytes)`,
    ...r.deleted.slice(0, 20).map((k) => `  ${k}`),
  ];
  if (r.deleted.length > 20) lines.push(`  and ${r.deleted.length - 20} more (--json lists every one)`);
  return `${lines.join('\n')}\n`;
}

function icebergSummary(r: RemoveOrphanFilesReport, job: string): string {
  const lines = [`${r.dry_run ? 'would remove' : 'removed'}: job ${job}, files nothing names, last modified before ${r.cutoff}`];
  for (const t of r.tables)
    lines.push(
      `  ${t.table}: ${t.deleted.length} of ${t.listed} files` +
        (t.too_young > 0 ? `, ${t.too_young} more unnamed but younger (kept)` : '') +
        (t.not_in_catalog && t.listed > 0 ? ', the catalog has no such table: none removed' : '') +
        (t.foreign > 0 ? `, ${t.foreign} not the table's (left alone)` : ''),
    );
  return `${lines.join('\n')}\n`;
}
