/**
 * A reorganisation far deeper than the horizon: chain 1 of the sandbox, windows of 50 blocks up to
 * `latest`, the last 1,200 blocks reorganised after an export (horizon 128). The run refuses to
 * repair it on its own and exits 2 (running again cannot help) with nothing exported, naming a
 * rewind that covers the fork; a scheduled run without it fails the same way. Followed once, the
 * rewind leaves files equal to a fresh export of the new branch, and the next run finds nothing.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise } from '@insight-export/sandbox';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { runCli as runInProcess } from '../helpers/cli-in-process.js';
import { readNdjsonExport, writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('reorg-deep-');
// The CLI runs in this process (with its log lines in stderr): what is tested is the run's horizon check and rewind, not the process.
const runCli = (argv: string[]) => runInProcess(argv, { logs: true });

const CHAIN = 1;
const DEPTH = 1200;
const CHUNK = 50;

it('the rewind a reorganisation deeper than the horizon names, followed once, repairs it exactly', { timeout: 180_000 }, async () => {
  const chain = sandbox.data.chain(CHAIN)!;
  const from = Math.floor((chain.headBlock - DEPTH - 100) / CHUNK) * CHUNK;
  // Wallets with rows on both sides of the fork.
  const wallets = new Set<string>();
  for (const t of sandbox.data.transactions(CHAIN)) {
    if (t.block_number >= from && t.block_number > chain.headBlock - DEPTH - 100 && wallets.size < 2) wallets.add(t.from_address);
  }
  const job = (name: string, out: string) => ({
    name,
    source: { base_url: sandbox.url, chains: [CHAIN] },
    targets: [...wallets].map((wallet) => ({ wallet, datasets: ['transactions'] })),
    range: { by: 'block', from, to: 'latest', chunk: CHUNK },
    // Windows committed one by one: one batch would span the fork and the horizon, and be repaired whole.
    output: { format: 'ndjson', destination: out, batch_windows: 'off' },
  });
  const base = join(tmp.dir, 'deep');
  const out = join(base, 'out');
  const jobFile = await writeJob(base, job('reorg-deep-hint', out));
  const flags = ['--log-level', 'warn', '--json'];
  const first = await runCli(['run', jobFile, ...flags]);
  expect(first.code, first.stderr).toBe(0);
  const before = readNdjsonExport(out).files;

  const summary = reorganise(sandbox.data, CHAIN, DEPTH);
  const deep = await runCli(['run', jobFile, ...flags]);
  expect(deep.code, deep.stderr).toBe(2);
  expect(deep.stderr).toMatch(/A chain reorganisation reaches deeper than the reorg horizon: nothing was exported/);
  expect(readNdjsonExport(out).files).toEqual(before);
  const hint = /--rewind (\d+) or more/.exec(deep.stderr);
  expect(hint, deep.stderr).not.toBeNull();
  const rewind = Number(hint![1]);
  // It reaches below the fork: the windows it leaves (ending at or below the frontier minus the
  // rewind, as --rewind counts) end at or below the first replaced block.
  const ends = listFiles(out)
    .flatMap((k) => (k.startsWith('_state/') ? [/_(\d+)\.json$/.exec(k)] : []))
    .filter((m) => m !== null);
  const frontier = Math.max(...ends.map((m) => Number(m[1])));
  const kept = Math.floor((frontier - rewind) / CHUNK) * CHUNK;
  expect(kept).toBeLessThanOrEqual(summary.from_block);
  // A scheduled run without the rewind cannot repair it either: the same refusal, the same rewind.
  const cron = await runCli(['run', jobFile, ...flags]);
  expect(cron.code).toBe(2);
  expect(cron.stderr).toContain(`--rewind ${rewind} or more`);

  const followed = await runCli(['run', jobFile, ...flags, '--rewind', String(rewind)]);
  expect(followed.code, followed.stderr).toBe(0);
  const fresh = join(base, 'fresh');
  const freshRun = await runCli(['run', await writeJob(join(base, 'fresh-job'), job('reorg-deep-fresh', fresh)), ...flags]);
  expect(freshRun.code, freshRun.stderr).toBe(0);
  const got = readNdjsonExport(out);
  const want = readNdjsonExport(fresh);
  expect(got.files).toEqual(want.files);
  expect(got.itemIds.length).toBe(want.itemIds.length);

  const next = await runCli(['run', jobFile, ...flags]);
  expect(next.code, next.stderr).toBe(0);
  const report = JSON.parse(next.stdout) as RunReport;
  expect(report.reorgs).toEqual([]);
  expect(report.windows.planned).toBe(0);
  console.log(
    `[reorg] depth ${DEPTH} on chain ${CHAIN} (fork at block ${summary.from_block}, horizon 128, windows of ${CHUNK} blocks): exit 2 naming --rewind ${rewind}; ` +
      `followed once, the destination equals a fresh export (${got.itemIds.length} rows, ${(JSON.parse(followed.stdout) as RunReport).windows.done} windows exported again)`,
  );
});
