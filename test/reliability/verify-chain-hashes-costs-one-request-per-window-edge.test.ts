/**
 * The cost of `verify --chain-hashes` is what it must prove, counted in requests the sandbox
 * received: on a clean export of thousands of rows over three chains, one request per distinct
 * window edge of each chain (an edge that still matches proves every block below it), none per
 * block of rows, and the number is stated before and counted after; after a reorganisation of one
 * chain, the windows whose edge changed cost ~log2 of their row blocks more (bisected), and they
 * are named with the first block whose rows are no longer the service's.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { ChainHashReport } from '../../src/state/verify-chain-hashes.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { reorganise } from '@insight-export/sandbox';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { completedWindows } from '../helpers/completed-windows.js';
import { runCli as runInProcess } from '../helpers/cli-in-process.js';
import { readNdjsonExport, writeJob } from './harness.js';

const sandbox = useSandbox({ transactions: 40_000 });
const tmp = useTempDir('verify-hashes-cost-');
// The CLI runs in this process (with its log lines in stderr): what is tested is what verify asks and finds, not the process.
const runCli = (argv: string[]) => runInProcess(argv, { logs: true });

const CHAINS = [1, 8453, 42161];
const REORG_CHAIN = 8453;

it('asks one hash per window edge, bisects only the windows whose edge changed, and states its cost', { timeout: 180_000 }, async () => {
  // The busiest senders of the data set: thousands of rows over the three chains.
  const counts = new Map<string, number>();
  for (const chain of CHAINS)
    for (const t of sandbox.data.transactions(chain)) counts.set(t.from_address, (counts.get(t.from_address) ?? 0) + 1);
  const wallets = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([w]) => w);
  const dir = join(tmp.dir, 'cost');
  const out = join(dir, 'out');
  const jobFile = await writeJob(dir, {
    name: 'verify-hashes-cost',
    source: { base_url: sandbox.url, chains: CHAINS },
    targets: wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
    range: { from: '2024-01-29', to: 'latest', safety_lag: '0s', chunk: '1d' },
    output: { format: 'ndjson', destination: out },
  });
  const run = await runCli(['run', jobFile, '--log-level', 'error']);
  expect(run.code, run.stderr).toBe(0);
  const rows = readNdjsonExport(out).itemIds.length;
  expect(rows).toBeGreaterThan(2000);

  const verify = async () => {
    sandbox.resetStats();
    const r = await runCli(['verify', jobFile, '--chain-hashes', '--json', '--log-level', 'info']);
    const report = JSON.parse(r.stdout) as VerifyReport & { chain_hashes: ChainHashReport };
    return { code: r.code, report, h: report.chain_hashes, sent: sandbox.stats().byRoute.resolve ?? 0, stderr: r.stderr };
  };
  const clean = await verify();
  expect(clean.code, clean.stderr).toBe(0);
  // Windows of the eight targets share their edges: one request per distinct edge block of each chain.
  const edges = await distinctEdges(out);
  expect(edges).toBeGreaterThan(CHAINS.length);
  expect(edges).toBeLessThan(clean.h.windows_checked);
  expect(clean.sent).toBe(edges);
  expect(clean.h.requests_planned).toBe(edges);
  expect(clean.h.requests).toBe(edges);
  expect(clean.h.row_blocks_checked).toBe(0);
  // Stated before any request is sent.
  expect(clean.stderr).toMatch(new RegExp(`"requests":${edges},.*requests planned`));

  const summary = reorganise(sandbox.data, REORG_CHAIN, 3000);
  const dirty = await verify();
  expect(dirty.code).toBe(1);
  const named = dirty.report.problems.filter((p) => p.kind === 'chain-hash');
  expect(named.length).toBeGreaterThan(0);
  for (const p of named) expect(p.unit).toMatch(new RegExp(`/${REORG_CHAIN}/time$`));
  const bisected = named.filter((p) =>
    /block\(s\) of its rows are no longer the service's \(from block \d+ on, bisected\)/.test(p.message),
  );
  expect(bisected.length).toBeGreaterThan(0);
  for (const p of bisected) expect(Number(/from block (\d+) on/.exec(p.message)![1])).toBeGreaterThanOrEqual(summary.from_block);
  const changedWindows = named.filter((p) => p.message.startsWith('edge block')).length;
  expect(dirty.sent).toBe(dirty.h.requests);
  // Edges, plus a bisection of at most log2(row blocks) + 1 per window whose edge changed.
  expect(dirty.h.requests).toBeLessThanOrEqual(edges + changedWindows * (Math.ceil(Math.log2(rows)) + 1));
  console.log(
    `[verify] --chain-hashes over ${rows} rows, ${wallets.length} targets, ${CHAINS.length} chains, ${clean.h.windows_checked} windows: ` +
      `${clean.sent} requests when clean (one per window edge of a chain); after a 3,000-block reorganisation of chain ${REORG_CHAIN}: ` +
      `${dirty.sent} requests (${changedWindows} window edges changed, ${dirty.h.row_blocks_checked} row blocks bisected), exit 1`,
  );
});

/** Distinct (chain, edge block) pairs the completed windows of an export recorded. */
async function distinctEdges(out: string): Promise<number> {
  const edges = new Set<string>();
  for (const { record } of await completedWindows(out, 'verify-hashes-cost')) {
    if (record.edge) edges.add(`${record.unit_key.split('/').at(-2)}:${record.edge.block_number}`);
  }
  return edges.size;
}
