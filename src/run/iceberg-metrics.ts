/**
 * The metrics of a run's Iceberg commits (src/run/metrics.ts renders them): each table's commits by
 * how they were made (`via`: catalog, through output.catalog.uri, or files, a metadata file of its
 * own), and through a catalog the answers on the way: 409s retried, answers lost or 5xx (the
 * "state unknown" outcome, decided by re-loading the table).
 */
import type { RunReport } from './report.js';

interface Family {
  name: string;
  help: string;
  samples: { labels: Record<string, string>; value: number }[];
}

export function icebergFamilies(report: RunReport): Family[] {
  const commits = report.iceberg_commits ?? [];
  const byTable = new Map<string, { catalog: number; files: number; conflicts: number; unknown: number }>();
  for (const c of commits) {
    const t = byTable.get(c.table) ?? { catalog: 0, files: 0, conflicts: 0, unknown: 0 };
    byTable.set(c.table, t);
    if (c.catalog) t.catalog++;
    else t.files++;
    t.conflicts += c.catalog?.conflicts ?? 0;
    t.unknown += c.catalog?.unknown_answers ?? 0;
  }
  const tables = [...byTable];
  const viaCatalog = tables.filter(([, t]) => t.catalog > 0);
  return [
    {
      name: 'insight_export_iceberg_commits',
      help: 'Snapshots the last run committed to each Iceberg table, by table and via (catalog: through output.catalog.uri; files: a metadata file of its own)',
      samples: tables.flatMap(([table, t]) =>
        (['catalog', 'files'] as const).filter((via) => t[via] > 0).map((via) => ({ labels: { table, via }, value: t[via] })),
      ),
    },
    {
      name: 'insight_export_iceberg_catalog_commit_conflicts',
      help: 'Commits of the last run the catalog answered 409 (another writer moved the table), each re-read and retried, by table',
      samples: viaCatalog.map(([table, t]) => ({ labels: { table }, value: t.conflicts })),
    },
    {
      name: 'insight_export_iceberg_catalog_commit_unknown',
      help: 'Commits of the last run whose answer was lost or a 5xx ("state unknown"), each decided by re-loading the table, by table',
      samples: viaCatalog.map(([table, t]) => ({ labels: { table }, value: t.unknown })),
    },
  ];
}
