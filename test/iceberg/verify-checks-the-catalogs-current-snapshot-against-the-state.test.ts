/**
 * Issue 44 item 4: with output.catalog.uri, `verify` loads each table from the catalog and checks
 * its current snapshot against the state as it does a table's files: a table committed through
 * the catalog verifies clean; a table whose current snapshot is not the one the state expects
 * (the catalog rolled back or lost the exporter's commit; another writer committed on top) is named
 * with the snapshot the catalog serves and the next step, and the next run puts it right.
 */
import { join } from 'node:path';
import { IcebergRestCatalog } from 'iceberg-js';
import { describe, expect, it } from 'vitest';
import type { VerifyReport } from '../../src/state/verify.js';
import { useCatalogSandbox } from '../helpers/catalog-sandbox.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { TABLE, walletJob } from '../helpers/iceberg-history.js';
import { useTempDir } from '../helpers/temp-dir.js';

const c = useCatalogSandbox();
const sandbox = c.sandbox;
const tmp = useTempDir('iceberg-catalog-verify-');
const JOB = 'catverify';
const dir = () => join(tmp.dir, 'job');
const id = { namespace: [JOB], name: TABLE };
const js = () => new IcebergRestCatalog({ baseUrl: sandbox.catalog.url, auth: { type: 'none' } });

async function run(to: string) {
  const flags = { format: 'iceberg' as const, catalogUri: sandbox.catalog.url };
  const r = await exportJob({ job: walletJob(JOB, to), dir: dir(), sandbox, destination: join(dir(), 'out'), flags });
  expect(r.status).toBe('succeeded');
  return r;
}

async function verify(): Promise<{ code: number; report: VerifyReport }> {
  const r = await runCli([
    'verify',
    join(dir(), 'job.yaml'),
    '--destination',
    join(dir(), 'out'),
    '--format',
    'iceberg',
    '--catalog-uri',
    sandbox.catalog.url,
    '--base-url',
    sandbox.url,
    '--json',
  ]);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
}

/** Commits `updates` to the table as another writer (iceberg-js), with no requirement. */
const otherWriter = (updates: unknown[]) => js().commitTable(id, { requirements: [], updates } as never);

describe('verify through the catalog', () => {
  it('a table committed through the catalog verifies clean', async () => {
    await run('2024-02-02');
    await run('2024-02-03');
    const { code, report } = await verify();
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
  });

  it('the catalog serving an earlier snapshot than the state expects is named with the next step; a run puts it right', async () => {
    const [first] = (await js().loadTable(id)).snapshots!;
    // The catalog lost the second commit: main back on the first snapshot.
    await otherWriter([{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': first!['snapshot-id'] }]);
    const { code, report } = await verify();
    expect(code).not.toBe(0);
    const messages = report.problems.map((p) => p.message);
    expect(messages.some((m) => m.includes('a completed window lists this file, the current snapshot does not'))).toBe(true);
    expect(messages).toContainEqual(
      expect.stringMatching(
        new RegExp(`table ${TABLE}: the catalog's table ${JOB}\\.${TABLE} .* serves snapshot ${first!['snapshot-id']} .*run the job again`),
      ),
    );

    const again = await run('2024-02-03');
    expect(again.iceberg_commits).toHaveLength(1);
    expect((await verify()).report.problems).toEqual([]);
  });

  it("another writer's snapshot on top, even listing the same files, is named", async () => {
    const meta = await js().loadTable(id);
    const main = meta.snapshots!.find((s) => s['snapshot-id'] === meta['current-snapshot-id'])!;
    const snapshot = {
      ...main,
      'snapshot-id': 4242,
      'parent-snapshot-id': main['snapshot-id'],
      'sequence-number': (meta['last-sequence-number'] ?? 0) + 1,
      summary: { operation: 'append' },
    };
    await otherWriter([
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 4242 },
    ]);
    const { code, report } = await verify();
    expect(code).not.toBe(0);
    expect(report.problems.map((p) => p.message)).toContainEqual(
      expect.stringContaining('serves snapshot 4242, which another writer committed'),
    );
  });
});
