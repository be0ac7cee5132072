/**
 * Reorganisations repaired without an operator. A two-chain job (time windows, `to: latest`) is
 * exported, then chain 8453 of the sandbox reorganises its last 1, 64 and 3,000 blocks (new
 * hashes, transactions dropped, replaced and moved to the next block) while cron-like runs go on.
 * Each run after a reorganisation finds the changed window edges, exports those windows again,
 * names the chain, the depth and the windows in its report, and leaves files byte-for-byte equal
 * to a fresh export of the new branch; chain 1 is never exported again. A quiet run costs one
 * request per chain. A reorganisation reaching an edge deeper than the horizon fails the run
 * (exit 2: running again cannot help, nothing exported) naming the range to rewind, and `--rewind`
 * then repairs it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise } from '@insight-export/sandbox';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { readNdjsonExport, writeJob } from './harness.js';

const sandbox = useSandbox({ transactions: 40_000 });
const tmp = useTempDir('reorg-repair-');
/** Senders of the newest transactions of the reorganised chain (before any reorganisation): they have rows in its last blocks. */
let newest: string[] = [];

beforeAll(() => {
  const senders: string[] = [];
  for (const t of sandbox.data.transactions(REORG_CHAIN)) senders.push(t.from_address);
  newest = [...new Set(senders.reverse())].slice(0, 3);
});

const CHAINS = [1, 8453];
const REORG_CHAIN = 8453;

function job(name: string, destination: string, range: Record<string, unknown>, batchWindows = 'on'): Record<string, unknown> {
  const alice = sandbox.data.wallet('alice.eth')!.address;
  return {
    name,
    source: { base_url: sandbox.url, chains: CHAINS },
    targets: [alice, ...newest].map((wallet) => ({ wallet, datasets: ['transactions'] })),
    range: { from: '2024-02-03', chunk: '6h', ...range },
    output: { format: 'ndjson', destination, batch_windows: batchWindows },
  };
}

const flags = ['--log-level', 'warn', '--json'];
/** Cron-like: up to the head, nothing held back, so even a reorganisation of the head block alone touches exported rows. */
const LATEST = { to: 'latest', safety_lag: '0s' };

/**
 * A run in this process (what is tested is the run's plan and repair, not the process): its exit
 * code, its --json report and its stderr with the log lines.
 */
async function run(jobFile: string, extra: string[] = []): Promise<{ code: number | null; report: RunReport | null; stderr: string }> {
  const r = await runCli(['run', jobFile, ...flags, ...extra], { logs: true });
  return { code: r.code, report: r.stdout.trim().startsWith('{') ? (JSON.parse(r.stdout) as RunReport) : null, stderr: r.stderr };
}

/** Block numbers of the exported rows of a chain. */
function exportedRowBlocks(root: string, chainId: number): number[] {
  const blocks = new Set<number>();
  for (const rel of listFiles(root)) {
    if (rel.startsWith('_state/') || rel.startsWith('.insight-export-tmp/')) continue;
    const bytes = readFileSync(join(root, rel));
    for (const line of (rel.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8').split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as { chain_id: number; block_number: number };
      if (row.chain_id === chainId) blocks.add(row.block_number);
    }
  }
  return [...blocks];
}

/** The destination's data files equal, byte for byte, those of a fresh export of the same job. */
async function expectEqualToFreshExport(
  base: string,
  name: string,
  out: string,
  range: Record<string, unknown>,
  label: string,
  batchWindows = 'on',
): Promise<number> {
  const freshOut = join(base, `fresh-${label}`);
  const fresh = await run(await writeJob(join(base, `fresh-${label}-job`), job(name, freshOut, range, batchWindows)));
  expect(fresh.code, fresh.stderr).toBe(0);
  const want = readNdjsonExport(freshOut);
  const got = readNdjsonExport(out);
  expect([...got.files.keys()].sort()).toEqual([...want.files.keys()].sort());
  expect(got.files).toEqual(want.files);
  expect(got.itemIds.length).toBe(want.itemIds.length);
  return got.itemIds.length;
}

it(
  "reorganisations of 1, 64 and 3,000 blocks are repaired by the next cron run, exactly, and the fork is placed by the rows' block hashes",
  { timeout: 900_000 },
  async () => {
    const base = join(tmp.dir, 'repair');
    const out = join(base, 'out');
    const range = LATEST;
    const jobFile = await writeJob(base, job('reorg-repair', out, range));
    const first = await run(jobFile);
    expect(first.code, first.stderr).toBe(0);

    const quiet = await run(jobFile);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.report!.windows.planned).toBe(0);
    expect(quiet.report!.reorgs).toEqual([]);

    // Last, a depth whose first replaced block and the block below it both hold rows: the fork is
    // then known exactly.
    const betweenTwoRowBlocks = (rowBlocks: number[]): number => {
      const held = new Set(rowBlocks);
      const lowest = [...held].sort((a, b) => b - a).find((b) => held.has(b - 1) && sandbox.data.chain(REORG_CHAIN)!.headBlock - b < 2000);
      expect(lowest, 'two adjacent blocks holding rows near the head').toBeDefined();
      return sandbox.data.chain(REORG_CHAIN)!.headBlock - lowest! + 1;
    };
    for (const pick of [() => 1, () => 64, () => 3000, betweenTwoRowBlocks]) {
      const rowBlocksBefore = exportedRowBlocks(out, REORG_CHAIN);
      const depth = pick(rowBlocksBefore);
      const exact = pick === betweenTwoRowBlocks;
      const summary = reorganise(sandbox.data, REORG_CHAIN, depth);
      const before = readNdjsonExport(out).files;
      const repaired = await run(jobFile);
      expect(repaired.code, repaired.stderr).toBe(0);
      const report = repaired.report!;
      expect(report.status).toBe('succeeded');
      // Every target's unit on the reorganised chain, and only those.
      expect(report.reorgs!.map((r) => r.chain_id)).toEqual([REORG_CHAIN, REORG_CHAIN, REORG_CHAIN, REORG_CHAIN]);
      // The fork is placed by the rows' own block hashes: the lowest replaced block holding rows
      // (or the lowest changed edge), and above the highest unreplaced block holding rows.
      const lowestChangedEdge = Math.min(...report.reorgs!.map((r) => r.changed_edges.at(-1)!.block_number));
      const replacedRowBlocks = rowBlocksBefore.filter((b) => b >= summary.from_block && b <= lowestChangedEdge);
      const keptRowBlocks = rowBlocksBefore.filter((b) => b < summary.from_block);
      for (const r of report.reorgs!) {
        expect(r.first_changed_block).toBe(Math.min(lowestChangedEdge, ...replacedRowBlocks));
        expect(r.fork_after_block).toBeLessThan(summary.from_block);
        expect(r.fork_after_block).toBeGreaterThanOrEqual(Math.max(...keptRowBlocks));
        expect(r.depth).toBe(r.newest_block - r.first_changed_block + 1);
        expect(r.depth_at_most).toBe(r.newest_block - r.fork_after_block!);
        expect(r.depth_exact).toBe(r.first_changed_block === r.fork_after_block! + 1);
        if (exact) expect(r.depth_exact).toBe(true);
        if (r.depth_exact) expect(r.depth).toBe(depth);
        expect(r.depth).toBeLessThanOrEqual(depth);
        expect(r.depth_at_most).toBeGreaterThanOrEqual(depth);
        expect(r.windows.length).toBeGreaterThan(0);
        expect(r.changed_edges[0]!.block_number).toBe(summary.head_block);
      }
      expect(report.windows_reexported).toBe(report.reorgs!.reduce((n, r) => n + r.windows.length, 0));
      expect(report.windows.done).toBe(report.windows.planned);
      expect(report.by_chain['1']).toBeUndefined();
      expect(repaired.stderr).toMatch(/reorganisation found: exporting the replaced windows again/);
      const rows = await expectEqualToFreshExport(base, 'reorg-repair', out, range, `d${depth}`);
      const now = readNdjsonExport(out).files;
      const changedFiles = [...new Set([...before.keys(), ...now.keys()])].filter((k) => before.get(k) !== now.get(k)).length;
      // The reorganised blocks held exported rows: the repair changed (or removed) their files.
      expect(changedFiles).toBeGreaterThan(0);
      console.log(
        `[reorg] depth ${depth} on chain ${REORG_CHAIN} (blocks ${summary.from_block}..${summary.head_block}: ${summary.dropped} dropped, ${summary.replaced} replaced, ${summary.moved} moved): ` +
          `the next run found it (fork after block ${report.reorgs![0]!.fork_after_block}, depth ${report.reorgs![0]!.depth}${report.reorgs![0]!.depth_exact ? ' exactly' : `..${report.reorgs![0]!.depth_at_most}`}), exported ${report.windows_reexported} windows again, ` +
          `${changedFiles} files changed or removed; destination equals a fresh export (${rows} rows)`,
      );
      const after = await run(jobFile);
      expect(after.code, after.stderr).toBe(0);
      expect(after.report!.reorgs).toEqual([]);
      expect(after.report!.windows.planned).toBe(0);
    }
  },
);

it('a quiet run costs one request per chain; a run with fixed `to` costs nothing else', { timeout: 300_000 }, async () => {
  const base = join(tmp.dir, 'quiet');
  const out = join(base, 'out');
  const jobFile = await writeJob(base, job('reorg-quiet', out, { to: '2024-02-04' }));
  const first = await run(jobFile);
  expect(first.code, first.stderr).toBe(0);
  // The run after an export recounts its windows (src/run/settle.ts): equal and older than a day, they settle.
  const settling = await run(jobFile);
  expect(settling.code, settling.stderr).toBe(0);
  expect(settling.report!.settle).toMatchObject({ recounted: first.report!.windows.done, settled: first.report!.windows.done });
  sandbox.resetStats();
  const quiet = await run(jobFile);
  expect(quiet.code, quiet.stderr).toBe(0);
  const stats = sandbox.stats();
  // Every target's newest window of a chain ends at the same block: one request per chain.
  expect(stats.byRoute).toEqual({ resolve: CHAINS.length });
  expect(quiet.report!.requests).toBe(CHAINS.length);
  console.log(
    `[reorg] quiet run of a ${CHAINS.length}-chain job with 4 targets: ${stats.requests} requests (resolve of each chain's newest edge)`,
  );
});

it('a reorganisation deeper than the horizon fails the run naming the range; --rewind repairs it', { timeout: 600_000 }, async () => {
  const base = join(tmp.dir, 'deep');
  const out = join(base, 'out');
  const range = { ...LATEST, reorg_horizon: 10 };
  // Windows committed one by one, so that edges below the horizon changed too (one batch of the day
  // would hold the whole reorganisation and be exported again whole).
  const jobFile = await writeJob(base, job('reorg-deep', out, range, 'off'));
  const first = await run(jobFile);
  expect(first.code, first.stderr).toBe(0);
  const before = readNdjsonExport(out).files;
  // Deeper than the newest (partial) window: the edge below it changed too, far beyond the horizon.
  const summary = reorganise(sandbox.data, REORG_CHAIN, 10_000);
  const deep = await run(jobFile);
  expect(deep.code).toBe(2);
  expect(deep.stderr).toMatch(/A chain reorganisation reaches deeper than the reorg horizon: nothing was exported/);
  expect(deep.stderr).toMatch(
    new RegExp(`chain ${REORG_CHAIN}, .*changed, \\d+ blocks below the newest exported block ${summary.head_block} \\(horizon 10\\)`),
  );
  expect(deep.stderr).toMatch(/--rewind \d+s or more/);
  // Nothing was exported or replaced.
  expect(readNdjsonExport(out).files).toEqual(before);
  const again = await run(jobFile);
  expect(again.code).toBe(2);

  const rewind = /--rewind (\d+s) or more/.exec(deep.stderr)![1]!;
  const repaired = await run(jobFile, ['--rewind', rewind]);
  expect(repaired.code, repaired.stderr).toBe(0);
  const rows = await expectEqualToFreshExport(base, 'reorg-deep', out, range, 'deep', 'off');
  console.log(
    `[reorg] depth 10,000 past a horizon of 10 blocks: exit 2 naming the range; --rewind ${rewind} (as the error said) then leaves the export equal to a fresh one (${rows} rows)`,
  );
});
