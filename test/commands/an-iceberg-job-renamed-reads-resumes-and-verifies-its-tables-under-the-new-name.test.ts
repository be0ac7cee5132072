/**
 * Issue 45 item 5: `rename` of an Iceberg job was untested. An Iceberg job exported under one name,
 * renamed in its file and with `rename --old-name`: its tables are read (icebird, at the current
 * snapshot) with the same rows, a run of the new name over a longer range resumes (exports only the
 * new day and commits it into the same tables), and `verify` of the new name is complete, tables included.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from '../reliability/harness.js';

const sandbox = useSandbox();
const tmp = useTempDir('rename-iceberg-');

function jobOf(name: string, out: string, to: string) {
  return {
    name,
    source: { base_url: sandbox.url, chains: [1] },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to, chunk: '1d' },
    output: { format: 'iceberg', destination: out },
  };
}

it('an Iceberg job renamed reads, resumes and verifies its tables under the new name', { timeout: 120_000 }, async () => {
  const out = join(tmp.dir, 'out');
  const oldFile = await writeJob(tmp.dir, jobOf('ice', out, '2024-02-02'), 'old.yaml');
  const newFile = await writeJob(tmp.dir, jobOf('ice-v2', out, '2024-02-03'), 'new.yaml');
  const first = await runCli(['run', oldFile, '--json', '--log-level', 'error']);
  expect(first.code, first.stderr).toBe(0);
  const store = await openStore(out);
  const before = sortedRows(await icebirdRows(store, 'transactions'));
  expect(before.length).toBeGreaterThan(0);

  const renamed = await runCli(['rename', newFile, '--old-name', 'ice', '--log-level', 'error']);
  expect(renamed.code, renamed.stderr).toBe(0);
  expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(before);

  const resumed = await runCli(['run', newFile, '--json', '--log-level', 'error']);
  expect(resumed.code, resumed.stderr).toBe(0);
  const report = JSON.parse(resumed.stdout) as { windows: { planned: number; done: number }; rows: number };
  expect(report.windows).toMatchObject({ planned: 1, done: 1 });
  expect(report.rows).toBeGreaterThan(0);
  const after = sortedRows(await icebirdRows(store, 'transactions'));
  expect(after.length).toBe(before.length + report.rows);
  expect(after).toEqual(expect.arrayContaining(before));

  const verify = await runCli(['verify', newFile, '--json', '--log-level', 'error']);
  expect(verify.code, verify.stdout).toBe(0);
  expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, problems: [], windows: { completed: 2, missing: 0 } });
});

it('rename of a job whose catalog namespace is its name is refused before any write, naming output.catalog.namespace', async () => {
  const out = join(tmp.dir, 'out-catalog');
  const job = {
    ...jobOf('ice-v3', out, '2024-02-02'),
    output: { format: 'iceberg', destination: out, catalog: { uri: 'http://127.0.0.1:9' } },
  };
  expect(
    (await runCli(['run', await writeJob(tmp.dir, jobOf('ice', out, '2024-02-02'), 'old-catalog.yaml'), '--log-level', 'error'])).code,
  ).toBe(0);
  const refused = await runCli(['rename', await writeJob(tmp.dir, job, 'catalog.yaml'), '--old-name', 'ice', '--log-level', 'error']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('output.catalog.namespace: ice');
  expect(existsSync(join(out, '_state/ice-v3'))).toBe(false);
});
