/**
 * Destinations written before unit manifests hold one completed marker per window. The next run
 * folds them into the units' manifests without an operator: it exports nothing again, leaves every
 * data file as it was, verify proves the same rows, and a later `to` exports only the new windows.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { completedWindows, unfoldCompletedWindows } from '../helpers/completed-windows.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({});
const tmp = useTempDir('migrate-');

async function dataFiles(out: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const o of new LocalStore(out).list('')) if (!o.key.startsWith('_state/')) files.set(o.key, o.etag);
  return files;
}

const folder = (out: string, name: string) => {
  const dir = join(out, '_state', 'migrate', name);
  return existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.json')) : [];
};

it('the next run folds the markers, exports nothing again, and verify proves the same rows', { timeout: 120_000 }, async () => {
  const out = join(tmp.dir, 'out');
  const job = (to: string) => ({
    name: 'migrate',
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to, chunk: '6h' },
    // Older versions committed every window on its own.
    output: { format: 'parquet', destination: out, batch_windows: 'off' },
  });
  const first = await exportJob({ job: job('2024-02-03'), dir: tmp.dir, jobFileName: 'run.yaml', destination: out });
  expect(first.status).toBe('succeeded');
  const files = await dataFiles(out);
  // The layout of an older version: one marker per window, no manifest.
  const windows = await unfoldCompletedWindows(out, 'migrate');
  expect(windows).toHaveLength(16);
  expect(folder(out, 'completed')).toHaveLength(16);
  expect(folder(out, 'units')).toEqual([]);

  const again = await exportJob({ job: job('2024-02-03'), dir: tmp.dir, jobFileName: 'run.yaml', destination: out });
  expect(again.status).toBe('succeeded');
  expect(again.windows.planned).toBe(0);
  expect(again.rows).toBe(0);
  expect(folder(out, 'completed')).toEqual([]);
  expect(folder(out, 'units')).toHaveLength(2);
  expect(await dataFiles(out)).toEqual(files);
  expect((await completedWindows(out, 'migrate')).map((w) => w.record)).toEqual(windows.map((w) => w.record));
  const proof = await verifyDestination({ store: new LocalStore(out), job: await loadJob(join(tmp.dir, 'run.yaml')) });
  expect(proof.problems).toEqual([]);
  expect(proof.rows).toEqual({ recorded: first.rows, counted: first.rows, distinct: first.rows });

  const later = await exportJob({ job: job('2024-02-04'), dir: tmp.dir, jobFileName: 'run.yaml', destination: out });
  expect(later.status).toBe('succeeded');
  expect(later.windows.planned).toBe(8);
  const after = await dataFiles(out);
  for (const [key, etag] of files) expect(after.get(key), key).toBe(etag);
  expect(await completedWindows(out, 'migrate')).toHaveLength(24);
});
