/**
 * Issue 34: the completed windows and their edge hashes live in the snapshot. Each commit writes the
 * table's windows (unit, interval, rows, run, edge, files) to a file its snapshot's summary names,
 * made current by the same metadata write as the files: the windows equal the state's, their files
 * are exactly the snapshot's data files, and the summary says per chain where the table's rows stop
 * being complete. Windows without rows are the table's too: a run that only adds such windows
 * commits a snapshot naming them. verify proves the snapshot's windows against the state.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, expect, it } from 'vitest';
import { keyOf, readCurrentVersion, readSnapshotManifests } from '../../src/iceberg/commit-table.js';
import { destinationUri } from '../../src/iceberg/index.js';
import { decodeWindows, WINDOWS_FILE_PROPERTY, type SnapshotWindow } from '../../src/iceberg/snapshot-windows.js';
import { currentSnapshot, type Snapshot } from '../../src/iceberg/table-metadata.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { WindowState, type WindowRecord } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 41, transactions: 6_000 });
const tmp = useTempDir('iceberg-windows-');
/** A wallet the sandbox never saw: its windows hold no rows. */
const QUIET = '0x00000000000000000000000000000000000000aa';

const job = (wallets: string[]) => ({
  name: 'wins',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
  range: { from: '2024-02-01', to: '2024-02-03', chunk: '6h' },
});

const out = () => join(tmp.dir, 'out');
const store = () => new LocalStore(out());
const run = (wallets: string[]) =>
  exportJob({ job: job(wallets), dir: tmp.dir, sandbox, destination: out(), flags: { format: 'iceberg' } });

async function verify(): Promise<VerifyReport> {
  const r = await runCli([
    'verify',
    join(tmp.dir, 'job.yaml'),
    '--destination',
    out(),
    '--base-url',
    sandbox.url,
    '--format',
    'iceberg',
    '--json',
  ]);
  return JSON.parse(r.stdout) as VerifyReport;
}

async function head(): Promise<Snapshot> {
  return currentSnapshot((await readCurrentVersion(store(), 'transactions'))!.meta)!;
}

async function windowsOf(snapshot: Snapshot): Promise<SnapshotWindow[]> {
  const s = store();
  const key = keyOf(destinationUri(s), snapshot.summary[WINDOWS_FILE_PROPERTY]!, 'test');
  expect(key).toMatch(/^transactions\/metadata\/[0-9a-f-]+-windows\.ndjson\.gz$/);
  return decodeWindows((await s.get(key))!.body);
}

async function stateWindows(): Promise<WindowRecord[]> {
  const out: WindowRecord[] = [];
  for await (const rec of new WindowState(store(), 'wins').completedRecords()) out.push(rec);
  return out;
}

const id = (w: { unit?: string; unit_key?: string; start: number; end: number }) => `${w.unit ?? w.unit_key} ${w.start}_${w.end}`;

beforeAll(async () => {
  expect((await run(['alice.eth'])).status).toBe('succeeded');
});

it("the snapshot's windows are the state's, with their rows, runs, edges and files", async () => {
  const snapshot = await head();
  const windows = await windowsOf(snapshot);
  const state = await stateWindows();
  expect(windows.length).toBeGreaterThan(2);
  expect(windows.map(id).sort()).toEqual(state.map(id).sort());
  const uri = (key: string) => `${destinationUri(store())}/${encodeURI(key)}`;
  for (const rec of state) {
    const w = windows.find((x) => id(x) === id(rec))!;
    expect(w).toMatchObject({ rows: rec.rows, run_id: rec.run_id, chain_id: Number(rec.unit_key.split('/').at(-2)), axis: 'time' });
    expect(w.edge).toEqual(rec.edge);
    expect(w.edge!.block_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(w.files).toEqual(rec.files.map((f) => ({ path: uri(f.key), rows: f.rows })));
  }
  expect(snapshot.summary['insight-export.windows']).toBe(String(windows.length));
});

it("the windows' files are exactly the snapshot's data files", async () => {
  const s = store();
  const meta = (await readCurrentVersion(s, 'transactions'))!.meta;
  const live = (await readSnapshotManifests(s, destinationUri(s), meta))
    .flatMap((m) => m.entries.filter((e) => e.status !== 2))
    .map((e) => `${e.data_file.file_path} ${e.data_file.record_count}`);
  const named = (await windowsOf(currentSnapshot(meta)!)).flatMap((w) => w.files.map((f) => `${f.path} ${f.rows}`));
  expect(named.length).toBeGreaterThan(1);
  expect(named.sort()).toEqual(live.sort());
});

it('the summary says per chain up to where the table holds every row', async () => {
  const summary = (await head()).summary;
  expect(summary['insight-export.chain-1.complete-before-time']).toBe('2024-02-03T00:00:00Z');
  expect(summary['insight-export.chain-8453.complete-before-time']).toBe('2024-02-03T00:00:00Z');
});

it('verify proves the windows against the state, and names a window whose rows the snapshot counts otherwise', async () => {
  expect((await verify()).problems).toEqual([]);
  const snapshot = await head();
  const windows = await windowsOf(snapshot);
  const path = decodeURI(snapshot.summary[WINDOWS_FILE_PROPERTY]!.replace(/^file:\/\//, ''));
  const original = windows.map((w) => `${JSON.stringify(w)}\n`).join('');
  const tampered = windows.map((w, i) => `${JSON.stringify(i === 0 ? { ...w, rows: w.rows + 1 } : w)}\n`).join('');
  writeFileSync(path, gzipSync(tampered));
  try {
    const { problems } = await verify();
    expect(problems.map((p) => p.message)).toContainEqual(
      expect.stringContaining(`window ${windows[0]!.start}_${windows[0]!.end} of ${windows[0]!.unit}: the current snapshot counts`),
    );
  } finally {
    writeFileSync(path, gzipSync(original));
  }
});

it('a run that adds only windows without rows commits a snapshot naming them; a run with nothing new commits none', async () => {
  const before = await head();
  const report = await run(['alice.eth', QUIET]);
  expect(report.status).toBe('succeeded');
  expect(report.iceberg_commits).toMatchObject([{ table: 'transactions', operation: 'append', added_files: 0, deleted_files: 0 }]);
  const after = await head();
  expect(after['parent-snapshot-id']).toBe(before['snapshot-id']);
  const quiet = (await windowsOf(after)).filter((w) => w.unit.includes(QUIET));
  expect(quiet.length).toBeGreaterThan(1);
  expect(quiet.every((w) => w.rows === 0 && w.files.length === 0)).toBe(true);
  expect(after.summary['total-data-files']).toBe(before.summary['total-data-files']);
  // The older snapshot's windows file is its own: it still names only the windows it held.
  expect((await windowsOf(before)).some((w) => w.unit.includes(QUIET))).toBe(false);

  expect((await run(['alice.eth', QUIET])).iceberg_commits).toEqual([]);
});
