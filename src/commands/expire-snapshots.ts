import type { ExpireSnapshotsReport, TableExpiry } from '../iceberg/expire-snapshots.js';
import { tableHistoryCommand } from './table-history.js';

/** Removes an Iceberg table's snapshots older than the retention and the files only they name (src/iceberg/expire-snapshots.ts). */
export const expireSnapshotsCommand = tableHistoryCommand<ExpireSnapshotsReport>({
  name: 'expire-snapshots',
  describe:
    "Iceberg: remove each table's snapshots older than output.snapshot_retention (never the current one), then the files only they name",
  example: ['$0 expire-snapshots jobs/x.yaml --snapshot-retention 3d', 'Keep three days of time travel'],
  run: async (input) => (await import('../iceberg/expire-snapshots.js')).expireSnapshots(input),
  summary: (r, job) => {
    const lines = [`${r.dry_run ? 'would expire' : 'expired'}: job ${job}, snapshots committed before ${r.cutoff}`];
    for (const t of r.tables) {
      const d = t.deleted;
      const files = [
        `${d.data_files.length} data files`,
        `${d.manifests.length} manifests`,
        `${d.manifest_lists.length} manifest lists`,
        `${d.metadata_files.length} metadata files`,
        ...(d.summary_files.length > 0 ? [`${d.summary_files.length} summary files`] : []),
      ];
      lines.push(
        `  ${t.table}: ${t.expired_snapshots.length} snapshots expired, ${t.kept_snapshots} kept` +
          committedAs(t) +
          `; ${r.dry_run ? 'would delete' : 'deleted'} ${files.join(', ')}`,
      );
    }
    return `${lines.join('\n')}\n`;
  },
});

/** The expiry's commit: the metadata file written, or the catalog's commit and the answers on the way. */
function committedAs(t: TableExpiry): string {
  if (t.catalog) {
    const c = t.catalog;
    return ` (through the catalog: ${c.metadata_location}; ${c.conflicts} conflicts retried, ${c.unknown_answers} answers lost or 5xx)`;
  }
  return t.metadata_key ? ` (${t.metadata_key})` : '';
}
