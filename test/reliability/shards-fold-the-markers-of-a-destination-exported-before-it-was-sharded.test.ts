/**
 * A destination exported by unsharded runs of an older version (one completed marker per window,
 * no manifest), then run as shards: the split first covers the completed windows, so every marker
 * has an owner that folds it. The shards export nothing again, leave every data file as it was,
 * and the destination's windows are the same.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { LocalStore } from '../../src/store/local.js';
import { completedWindows, unfoldCompletedWindows } from '../helpers/completed-windows.js';
import { useSandbox } from '../helpers/sandbox.js';
import { runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('shard-fold-');

async function dataFiles(out: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const o of new LocalStore(out).list('')) if (!o.key.startsWith('_state/')) files.set(o.key, o.etag);
  return files;
}

const markers = (out: string) => {
  const dir = join(out, '_state', 'shard-fold', 'completed');
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.json')) : [];
};

it('shards fold every marker of an unsharded older destination and export nothing again', { timeout: 300_000 }, async () => {
  const out = join(work.dir, 'out');
  const jobFile = await writeJob(work.dir, {
    name: 'shard-fold',
    source: { base_url: sandbox.url, chains: [1, 8453, 42161] },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '6h' },
    // Older versions committed every window on its own.
    output: { format: 'ndjson', destination: out, batch_windows: 'off' },
  });
  const first = await runCli(work.cli, ['run', jobFile, '--json']);
  expect(first.code, first.stderr).toBe(0);
  const files = await dataFiles(out);
  const windows = await unfoldCompletedWindows(out, 'shard-fold');
  expect(windows).toHaveLength(24);
  expect(markers(out)).toHaveLength(24);

  const shards = await Promise.all([0, 1, 2].map((i) => runCli(work.cli, ['run', jobFile, '--shard', `${i}/3`, '--json'])));
  for (const r of shards) {
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as RunReport).windows.planned).toBe(0);
  }
  expect(markers(out)).toEqual([]);
  expect(await dataFiles(out)).toEqual(files);
  expect((await completedWindows(out, 'shard-fold')).map((w) => w.record)).toEqual(windows.map((w) => w.record));
});
