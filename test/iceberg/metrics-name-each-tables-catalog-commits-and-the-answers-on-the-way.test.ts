/**
 * Issue 44 item 4: the run's metrics name each table's catalog commits: how many snapshots went
 * through the catalog (`via="catalog"`, beside `via="files"` without one), and the answers on the
 * way: 409s retried and answers lost or 5xx ("state unknown"), decided by re-loading the table.
 * The run report carries the same counts under iceberg_commits[].catalog.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { renderMetrics } from '../../src/run/metrics.js';
import { useCatalogSandbox } from '../helpers/catalog-sandbox.js';
import { exportJob } from '../helpers/export.js';
import { TABLE, walletJob } from '../helpers/iceberg-history.js';
import { useTempDir } from '../helpers/temp-dir.js';

const c = useCatalogSandbox();
const sandbox = c.sandbox;
const tmp = useTempDir('iceberg-catalog-metrics-');

const run = async (name: string, catalog: boolean) => {
  const flags = { format: 'iceberg' as const, ...(catalog ? { catalogUri: sandbox.catalog.url } : {}) };
  const dir = join(tmp.dir, name);
  const r = await exportJob({ job: walletJob(name, '2024-02-02'), dir, sandbox, destination: join(dir, 'out'), flags });
  expect(r.status).toBe('succeeded');
  return r;
};

it('a commit answered 502 then one through the catalog: the metrics count the commit via the catalog and the unknown answer', async () => {
  sandbox.catalog.set({ commitFaults: [502] });
  const r = await run('catmetrics', true);
  expect(r.iceberg_commits).toMatchObject([{ table: TABLE, catalog: { conflicts: 0, unknown_answers: 1 } }]);
  const text = renderMetrics(r);
  expect(text).toContain(`insight_export_iceberg_commits{table="${TABLE}",via="catalog"} 1\n`);
  expect(text).toContain(`insight_export_iceberg_catalog_commit_unknown{table="${TABLE}"} 1\n`);
  expect(text).toContain(`insight_export_iceberg_catalog_commit_conflicts{table="${TABLE}"} 0\n`);
});

it('without a catalog the commits are via files, and no catalog answer is counted', async () => {
  const text = renderMetrics(await run('filemetrics', false));
  expect(text).toContain(`insight_export_iceberg_commits{table="${TABLE}",via="files"} 1\n`);
  expect(text).not.toContain('insight_export_iceberg_catalog_commit');
});
