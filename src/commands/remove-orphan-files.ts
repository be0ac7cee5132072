import type { RemoveOrphanFilesReport } from '../iceberg/remove-orphan-files.js';
import { tableHistoryCommand } from './table-history.js';

/** Removes files in an Iceberg table's folder that nothing names and that are older than the retention (src/iceberg/remove-orphan-files.ts). */
export const removeOrphanFilesCommand = tableHistoryCommand<RemoveOrphanFilesReport>({
  name: 'remove-orphan-files',
  describe:
    "Iceberg: delete the files in each table's folder that no snapshot, metadata file or state record names and that are older than output.snapshot_retention",
  example: ['$0 remove-orphan-files jobs/x.yaml --dry-run', 'List what crashed commits left, deleting nothing'],
  run: async (input) => (await import('../iceberg/remove-orphan-files.js')).removeOrphanFiles(input),
  summary: (r, job) => {
    const lines = [`${r.dry_run ? 'would remove' : 'removed'}: job ${job}, files nothing names, last modified before ${r.cutoff}`];
    for (const t of r.tables)
      lines.push(
        `  ${t.table}: ${t.deleted.length} of ${t.listed} files` +
          (t.too_young > 0 ? `, ${t.too_young} more unnamed but younger (kept)` : '') +
          (t.foreign > 0 ? `, ${t.foreign} not the table's (left alone)` : ''),
      );
    return `${lines.join('\n')}\n`;
  },
});
