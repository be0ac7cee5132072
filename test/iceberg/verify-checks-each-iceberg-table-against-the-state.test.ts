/**
 * Issue 34: `verify` of an Iceberg destination. Files that only older snapshots name (a --force
 * run kept them for their readers) are the table's history, not leftovers; a table whose current
 * snapshot lags the state, or names a file that is gone, is a problem (exit 1).
 */
import { cpSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCurrentVersion, readSnapshotManifests, destinationUri } from '../../src/iceberg/index.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 38, transactions: 2_000 });
const tmp = useTempDir('iceberg-verify-');
const job = {
  name: 'iceverify',
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
  output: { format: 'iceberg' },
};
const out = () => join(tmp.dir, 'out');
const saved = () => join(tmp.dir, 'saved');

async function verify(): Promise<{ code: number; report: VerifyReport }> {
  const r = await runCli(['verify', join(tmp.dir, 'job.yaml'), '--destination', out(), '--base-url', sandbox.url, '--json']);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
}

beforeAll(async () => {
  expect((await exportJob({ job, dir: tmp.dir, sandbox, destination: out() })).status).toBe('succeeded');
  expect((await exportJob({ job, dir: tmp.dir, sandbox, destination: out(), force: true })).iceberg_commits).toMatchObject([
    { operation: 'overwrite' },
  ]);
  cpSync(out(), saved(), { recursive: true });
});

function restore(): void {
  rmSync(out(), { recursive: true });
  cpSync(saved(), out(), { recursive: true });
}

describe('verify of an iceberg destination', () => {
  it('passes after --force: the replaced files are the older snapshot’s, not unreferenced', async () => {
    restore();
    const { code, report } = await verify();
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
  });

  it('names a table whose current snapshot lags the state', async () => {
    restore();
    unlinkSync(join(out(), 'transactions', 'metadata', 'v2.metadata.json'));
    const { code, report } = await verify();
    expect(code).toBe(1);
    const problems = report.problems.filter((p) => p.kind === 'iceberg-table');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.message.startsWith('table transactions:'))).toBe(true);
    expect(problems.map((p) => p.message).join('\n')).toContain('a completed window lists this file, the current snapshot does not');
  });

  it('names a file the current snapshot lists that is gone', async () => {
    restore();
    const store = new LocalStore(out());
    const current = (await readCurrentVersion(store, 'transactions'))!;
    const [entry] = (await readSnapshotManifests(store, destinationUri(store), current.meta))[0]!.entries;
    const key = decodeURI(entry!.data_file.file_path.slice(destinationUri(store).length + 1));
    unlinkSync(join(out(), key));
    const { code, report } = await verify();
    expect(code).toBe(1);
    expect(report.problems).toContainEqual(
      expect.objectContaining({
        kind: 'iceberg-table',
        key,
        message: 'table transactions: listed by the current snapshot but missing: readers of the table fail',
      }),
    );
  });
});
