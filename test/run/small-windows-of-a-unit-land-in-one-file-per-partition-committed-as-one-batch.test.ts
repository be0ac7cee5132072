/**
 * Issue 33 goal 2: a job of hourly windows writes, per unit and UTC day, one file and one completed
 * record covering the day's windows (a batch), with exactly the sandbox's rows; the report still
 * counts the planned windows. A window exported again inside a batch (--force of one hour,
 * --rewind) replaces the whole batch and leaves exactly the source's rows; with batch_windows
 * "off" every window keeps its own file and record.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { verifyDestination } from '../../src/state/verify.js';
import { WindowState, type WindowRecord } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli } from '../helpers/cli-in-process.js';
import { expectedTransactionRow, listFiles, readTable, truthWalletTransactions, unixDay, type OutputFormat } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from '../reliability/harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('batches-');
const CHAINS = [1, 8453];
const FROM = '2024-02-01';
const TO = '2024-02-04';
const DAY = 86_400;

function jobSpec(name: string, format: OutputFormat, batch: 'on' | 'off' = 'on') {
  return {
    name,
    source: { base_url: sandbox.url, chains: CHAINS },
    targets: [{ wallet: wallet(), datasets: ['transactions'] }],
    range: { by: 'time', from: FROM, to: TO, chunk: '1h' },
    decode: false,
    output: { format, batch_windows: batch },
  };
}

const wallet = () => sandbox.data.wallet('alice.eth')!.address;

async function setUp(name: string, format: OutputFormat, batch: 'on' | 'off' = 'on') {
  const dir = join(tmp.dir, name);
  const out = join(dir, 'out');
  const file = await writeJob(dir, jobSpec(name, format, batch));
  return { file, out, name };
}

async function run(file: string, out: string, ...more: string[]): Promise<RunReport> {
  const r = await runCli(['run', file, '--destination', out, '--log-level', 'silent', '--json', ...more]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as RunReport;
}

/** The completed records, read through the state (whatever its layout). */
async function records(out: string, job: string): Promise<WindowRecord[]> {
  const found: WindowRecord[] = [];
  for await (const r of new WindowState(new LocalStore(out), job).completedRecords()) found.push(r);
  return found;
}

const dataFiles = (out: string) => listFiles(out).filter((k) => k.startsWith('transactions/'));

/** Every row of the export equals the sandbox's rows of the job's range, each once; verify finds nothing wrong. */
async function expectExact(out: string, file: string, format: OutputFormat): Promise<void> {
  const truth = truthWalletTransactions(sandbox.data, wallet(), CHAINS, { by: 'time', from: unixDay(FROM), to: unixDay(TO) });
  expect(truth.length).toBeGreaterThan(100);
  const byId = (a: { item_id?: unknown }, b: { item_id?: unknown }) => String(a.item_id).localeCompare(String(b.item_id));
  const got = (await readTable(out, 'transactions', format)).sort(byId);
  const want = truth.map((t) => expectedTransactionRow(t, wallet())).sort(byId);
  expect(got.length).toBe(want.length);
  expect(got).toEqual(want);
  const v = await verifyDestination({ store: new LocalStore(out), job: await loadJob(file) });
  expect(v.problems).toEqual([]);
}

describe.each(['ndjson', 'parquet'] as const)('%s', (format) => {
  it('the hourly windows of a unit and day land in one file, committed as one interval', async () => {
    const { file, out, name } = await setUp(`one-file-${format}`, format);
    const report = await run(file, out);
    expect(report.windows.planned).toBe(3 * 24 * CHAINS.length);
    expect(report.windows.done).toBe(report.windows.planned);

    const recs = await records(out, name);
    // One record per unit and day, covering the day's 24 windows.
    expect(recs.length).toBe(3 * CHAINS.length);
    for (const r of recs) {
      expect(r.end - r.start).toBe(DAY);
      expect(r.start % DAY).toBe(0);
      expect(r.files.length).toBeLessThanOrEqual(1);
    }
    // One file per partition (chain and date) that holds rows.
    const files = dataFiles(out);
    const partitions = new Set(files.map((k) => k.slice(0, k.lastIndexOf('/'))));
    expect(files.length).toBe(partitions.size);
    expect(files.length).toBe(recs.filter((r) => r.rows > 0).length);
    expect(report.files).toBe(files.length);
    await expectExact(out, file, format);
  });
});

it('with batch_windows off, every window keeps its own record', async () => {
  const { file, out, name } = await setUp('per-window', 'ndjson', 'off');
  const report = await run(file, out);
  expect((await records(out, name)).length).toBe(report.windows.planned);
  expect(dataFiles(out).length).toBeGreaterThan(3 * CHAINS.length);
});

it('--force of one hour inside a batch exports the whole batch again and leaves exactly the source rows', async () => {
  const { file, out, name } = await setUp('force-inside', 'ndjson');
  await run(file, out);
  const before = await records(out, name);
  const forced = await run(file, out, '--force', '--from', '2024-02-02T05:00:00Z', '--to', '2024-02-02T06:00:00Z');
  // The day's batch is exported again whole, as one window per chain.
  expect(forced.windows.planned).toBe(CHAINS.length);
  expect(forced.windows.done).toBe(CHAINS.length);
  const after = await records(out, name);
  const intervals = (rs: WindowRecord[]) => rs.map((r) => `${r.unit_key} ${r.start}_${r.end}`).sort();
  expect(intervals(after)).toEqual(intervals(before));
  expect(after.filter((r) => r.run_id !== before.find((b) => b.unit_key === r.unit_key && b.start === r.start)!.run_id)).toHaveLength(
    CHAINS.length,
  );
  await expectExact(out, file, 'ndjson');
});

it('--rewind of a few hours exports the newest batches again whole and leaves exactly the source rows', async () => {
  const { file, out, name } = await setUp('rewind-inside', 'ndjson');
  await run(file, out);
  const rewound = await run(file, out, '--rewind', '2h');
  // The newest day of each chain, whole: its batch is planned again as one window.
  expect(rewound.windows.planned).toBe(CHAINS.length);
  expect((await records(out, name)).length).toBe(3 * CHAINS.length);
  await expectExact(out, file, 'ndjson');
});
