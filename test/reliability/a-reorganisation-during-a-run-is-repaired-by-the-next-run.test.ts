/**
 * A reorganisation that happens while a run exports, whatever the commit order. Chain 1 of the
 * sandbox, windows of 10 blocks up to `latest` (safety lag 5), one unit in flight: the windows are
 * read oldest first, and the sandbox reorganises its last 50 blocks just before the run asks for
 * the edge of its newest window. The windows read before hold rows of the old branch and recorded
 * old edges; the newest window recorded an edge of the new branch, which still matches at the next
 * run. The next run must find the stale windows below it anyway, export exactly those again, and
 * leave files equal to a fresh export of the new branch (NDJSON and Parquet); the run after that
 * finds nothing. On a quiet chain the check costs one request per chain when nothing was committed
 * since the last check, two when the last run committed one window (one per further window within
 * the horizon), whatever the number of targets.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise, type ReorgSummary } from '@insight-export/sandbox';
import { listFiles, readTable, startRecordingProxy, type OutputFormat, type RecordingProxy } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { runCli } from '../helpers/cli-in-process.js';
import { readNdjsonExport, writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('reorg-mid-run-');
let proxy: RecordingProxy | undefined;
/** The block whose `resolve` sets off the reorganisation (once), and what it did. */
let trigger: { block: number; fired: ReorgSummary | null } | null = null;
let listRequests = 0;
/** Block numbers of the `resolve` requests the proxy saw. */
const resolved: number[] = [];

const CHAIN = 1;
const DEPTH = 50;
const CHUNK = 10;
const LAG = 5;

beforeAll(async () => {
  // In front of the sandbox: reorganises the chain when the run asks for the chosen edge, after
  // its first list request (so the head search before the export cannot set it off).
  proxy = await startRecordingProxy(sandbox.url, {
    onRequest(url) {
      if (/\/wallets\/[^/]+\/transactions$/.test(url.pathname)) listRequests++;
      const asked = /\/resolve\/(\d+)$/.exec(url.pathname);
      if (asked) resolved.push(Number(asked[1]));
      if (trigger && !trigger.fired && listRequests > 0 && url.pathname.endsWith(`/resolve/${trigger.block}`)) {
        trigger.fired = reorganise(sandbox.data, CHAIN, DEPTH);
      }
    },
  });
});
afterAll(async () => {
  await proxy?.close();
});

/** Wallets with transactions in the last blocks of the chain (below the safety lag): the reorganisation touches their rows. */
function walletsNearHead(): string[] {
  const head = sandbox.data.chain(CHAIN)!.headBlock;
  const wallets = new Set<string>();
  for (const t of sandbox.data.transactions(CHAIN)) {
    if (t.block_number > head - DEPTH && t.block_number <= head - LAG) wallets.add(t.from_address);
  }
  return [...wallets];
}

function job(name: string, baseUrl: string, out: string, format: OutputFormat, wallets: string[], from: number): Record<string, unknown> {
  return {
    name,
    source: { base_url: baseUrl, chains: [CHAIN] },
    targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
    range: { by: 'block', from, to: 'latest', chunk: CHUNK, safety_lag: LAG },
    // Windows committed one by one: a batch reads its edge before all of its rows.
    output: { format, destination: out, batch_windows: 'off' },
  };
}

/** A run in this process (what is tested is the run's reorganisation check, not the process). */
async function run(jobFile: string): Promise<{ code: number | null; report: RunReport; stderr: string }> {
  const r = await runCli(['run', jobFile, '--log-level', 'warn', '--json', '--units-in-flight', '1'], { logs: true });
  expect(r.code, r.stderr).toBe(0);
  return { code: r.code, report: JSON.parse(r.stdout) as RunReport, stderr: r.stderr };
}

/** Data file keys and every row (canonical, sorted by item_id) of an export. */
async function contents(root: string, format: OutputFormat): Promise<{ keys: string[]; rows: unknown[] }> {
  const keys = listFiles(root).filter((k) => !k.startsWith('_state/') && !k.startsWith('.insight-export-tmp/'));
  const rows = (await readTable(root, 'transactions', format)).sort((a, b) => String(a.item_id).localeCompare(String(b.item_id)));
  return { keys, rows };
}

it.each(['ndjson', 'parquet'] as const)(
  'stale windows below a newer window committed after the reorganisation are found and repaired by the next run (%s)',
  { timeout: 240_000 },
  async (format) => {
    const head = sandbox.data.chain(CHAIN)!.headBlock;
    const end = head - LAG + 1;
    const newestStart = Math.floor((end - 1) / CHUNK) * CHUNK;
    const from = newestStart - 10 * CHUNK;
    const wallets = walletsNearHead();
    expect(wallets.length).toBeGreaterThan(0);
    const base = join(tmp.dir, format);
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(`reorg-mid-run-${format}`, proxy!.url, out, format, wallets, from));

    // The newest window's edge is asked after every window below it was read (one unit in flight).
    trigger = { block: end - 1, fired: null };
    listRequests = 0;
    const first = await run(jobFile);
    const summary = trigger.fired;
    expect(summary, 'the reorganisation was posted during the run').not.toBeNull();
    expect(first.report.windows.done).toBe(first.report.windows.planned);

    const fresh = join(base, 'fresh');
    const freshRun = await runCli([
      'run',
      await writeJob(join(base, 'fresh-job'), job(`reorg-mid-run-fresh-${format}`, sandbox.url, fresh, format, wallets, from)),
      '--log-level',
      'warn',
    ]);
    expect(freshRun.code, freshRun.stderr).toBe(0);
    const want = await contents(fresh, format);
    const stale = await contents(out, format);
    // The run left rows of the old branch: the case to repair.
    expect(stale.rows).not.toEqual(want.rows);

    const next = await run(jobFile);
    expect(next.report.reorgs!.length).toBe(wallets.length);
    for (const r of next.report.reorgs!) {
      expect(r.chain_id).toBe(CHAIN);
      expect(r.first_changed_block).toBeGreaterThanOrEqual(summary!.from_block);
      expect(r.fork_after_block).toBeLessThan(summary!.from_block);
      // The newest window was read after the reorganisation: its edge still matches, it is not exported again.
      expect(r.windows.every((w) => w.end <= newestStart)).toBe(true);
    }
    const got = await contents(out, format);
    expect(got.keys).toEqual(want.keys);
    expect(got.rows).toEqual(want.rows);
    if (format === 'ndjson') expect(readNdjsonExport(out).files).toEqual(readNdjsonExport(fresh).files);

    const after = await run(jobFile);
    expect(after.report.reorgs).toEqual([]);
    expect(after.report.windows.planned).toBe(0);
    console.log(
      `[reorg] depth ${DEPTH} posted while a run exported (${format}, one unit in flight): the next run found ` +
        `${next.report.reorgs!.length} units reorganised (fork after block ${next.report.reorgs![0]!.fork_after_block}), exported ` +
        `${next.report.windows_reexported} windows again; destination equals a fresh export of the new branch (${got.rows.length} rows)`,
    );
  },
);

it('on a quiet chain the check costs one request per chain, two after a run that committed a window', { timeout: 120_000 }, async () => {
  const head = sandbox.data.chain(CHAIN)!.headBlock;
  // Fixed ends well below the head, one window further each run, as a cron run up to `latest` would go.
  const from = Math.floor((head - 1000) / CHUNK) * CHUNK;
  const base = join(tmp.dir, 'quiet');
  const out = join(base, 'out');
  const wallets = walletsNearHead();
  const jobAt = async (to: number) => {
    const j = job('reorg-quiet', proxy!.url, out, 'ndjson', wallets, from);
    return writeJob(base, { ...j, range: { by: 'block', from, to, chunk: CHUNK } });
  };
  /** `resolve` requests of a run for blocks at or below its last edge: the reorganisation check and the new windows' edges. */
  const edgeRequests = async (to: number) => {
    resolved.length = 0;
    const r = await run(await jobAt(to));
    expect(r.report.reorgs).toEqual([]);
    return { asked: resolved.filter((b) => b < to).length, windows: r.report.windows.done / wallets.length };
  };
  await edgeRequests(from + 5 * CHUNK);
  await edgeRequests(from + 6 * CHUNK);
  // Per run: check requests + one edge per new window (shared by every target).
  const oneNew = await edgeRequests(from + 7 * CHUNK);
  expect(oneNew.windows).toBe(1);
  expect(oneNew.asked - oneNew.windows).toBe(2);
  const afterOne = await edgeRequests(from + 7 * CHUNK);
  expect(afterOne).toEqual({ asked: 2, windows: 0 });
  const quiet = await edgeRequests(from + 7 * CHUNK);
  expect(quiet).toEqual({ asked: 1, windows: 0 });
  console.log(
    `[reorg] check cost on a quiet chain (${wallets.length} targets, one chain): ${afterOne.asked} requests in a run after a run that committed one window ` +
      `(${oneNew.asked - oneNew.windows} + 1 edge when it commits one itself), ${quiet.asked} when nothing was committed since the last check`,
  );
});
