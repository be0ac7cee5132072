/**
 * Issue 45.10: a service taking fewer chain ids per request than the contract's 55. Every request
 * that names several chains (list pages, the recount's count requests of settle and verify, the
 * blocks dataset's resolve requests) is built from source.chain_ids_per_request and, after the
 * service refused one, from the halved number; `plan` estimates from the setting. Driven through
 * the CLI against a sandbox of 12 chains taking 5 chain ids a request (`maxChainIdsPerRequest`),
 * behind a proxy that records every request.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { RunEstimate } from '../../src/plan/estimate.js';
import type { RunReport } from '../../src/run/report.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { runCli } from '../helpers/cli-in-process.js';
import { expectedTransactionRow, readTable, startRecordingProxy, truthWalletTransactions, unixDay } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const LIMIT = 5;
const sandbox = useSandbox({ seed: 21, transactions: 2_000, extraChains: 9, maxChainIdsPerRequest: LIMIT });
const tmp = useTempDir('chains-per-request-');
const REFUSAL_LOG = 'chain ids in one request';
const SET = ['--chain-ids-per-request', String(LIMIT)];

const chains = () => sandbox.data.chains.map((c) => c.chainId);
const wallet = () => sandbox.data.wallets[0]!.address;

function walletJob(name: string): string {
  const file = join(tmp.dir, `${name}.yaml`);
  const job = {
    name,
    source: { base_url: 'sandbox', chains: chains() },
    targets: [{ wallet: wallet(), datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    output: { format: 'ndjson', destination: join(tmp.dir, name) },
  };
  writeFileSync(file, stringify(job));
  return file;
}

/** The chains whose blocks share their numbers (every chain but 1 and 42161): 10, in two requests of 5. */
const sharingBlocks = () => sandbox.data.chains.filter((c) => c.firstBlock === sandbox.data.chain(8453)!.firstBlock).map((c) => c.chainId);

/** Ten blocks every chain of `sharingBlocks` has, in two windows. */
function blocksJob(name: string): { file: string; blocks: number } {
  const from = sandbox.data.chain(8453)!.firstBlock + 100;
  const job = {
    name,
    source: { base_url: 'sandbox', chains: sharingBlocks() },
    targets: [{ datasets: ['blocks'] }],
    range: { by: 'block', from, to: from + 10, chunk: 5 },
    output: { format: 'ndjson', destination: join(tmp.dir, name) },
  };
  const file = join(tmp.dir, `${name}.yaml`);
  writeFileSync(file, stringify(job));
  return { file, blocks: 10 };
}

/** Runs the CLI through a recording proxy: its exit code, output, the refusal lines logged, and the requests it sent. */
async function viaProxy(args: string[]) {
  const proxy = await startRecordingProxy(sandbox.url);
  const before = sandbox.stats().byStatus[400] ?? 0;
  try {
    const r = await runCli([...args, '--base-url', proxy.url], { logs: true });
    const refusals = r.stderr.split('\n').filter((l) => l.includes(REFUSAL_LOG));
    return { ...r, refusals, requests: proxy.requests, refused: (sandbox.stats().byStatus[400] ?? 0) - before };
  } finally {
    await proxy.close();
  }
}

const chainIdsOf = (u: URL) => u.searchParams.getAll('chain_id').length;
const counts = (requests: URL[]) => requests.filter((u) => u.searchParams.has('aggregate'));

/** The wallet's rows over the 12 chains, straight from the data set, as item ids. */
function truthIds(): string[] {
  const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-03') };
  return truthWalletTransactions(sandbox.data, wallet(), chains(), range)
    .map((t) => expectedTransactionRow(t, wallet()).item_id as string)
    .sort();
}

async function exportedIds(name: string): Promise<string[]> {
  return (await readTable(join(tmp.dir, name), 'transactions', 'ndjson')).map((r) => r.item_id as string).sort();
}

describe('12 chains, a service taking 5 chain ids a request', () => {
  it(
    'chain_ids_per_request 5: plan, run, settle and verify send no request over 5 chains, every row once',
    { timeout: 120_000 },
    async () => {
      expect(chains()).toHaveLength(12);
      const file = walletJob('wallet-set');
      // Two windows of 12 chains: 3 first-page requests each at 5 a request (1 each at the contract's 55).
      const planned = await viaProxy(['plan', file, '--json', ...SET]);
      expect(planned.code, planned.stderr).toBe(0);
      expect((JSON.parse(planned.stdout) as { estimate: { run: RunEstimate } }).estimate.run.pages).toBe(2 * 3);
      const planned55 = await viaProxy(['plan', file, '--json']);
      expect((JSON.parse(planned55.stdout) as { estimate: { run: RunEstimate } }).estimate.run.pages).toBe(2 * 1);

      const first = await viaProxy(['run', file, '--json', ...SET]);
      expect(first.code, first.stderr).toBe(0);
      expect((JSON.parse(first.stdout) as RunReport).status).toBe('succeeded');
      const truth = truthIds();
      expect(truth.length).toBeGreaterThan(0);
      expect(await exportedIds('wallet-set')).toEqual(truth);

      // What the next run recounts (settle): the probe of the wallet route (one chain), then ceil(12 or 11 / 5) a window.
      const pending = await viaProxy(['plan', file, '--json', ...SET]);
      expect((JSON.parse(pending.stdout) as { settle: { requests: number } }).settle.requests).toBe(1 + 3 + 3);
      const second = await viaProxy(['run', file, '--json', ...SET]);
      expect(second.code, second.stderr).toBe(0);
      const settled = JSON.parse(second.stdout) as RunReport;
      expect(settled.settle?.recounted).toBe(24);
      expect(counts(second.requests)).toHaveLength(1 + 3 + 3);

      const verified = await viaProxy(['verify', file, '--recount', '--json', ...SET]);
      expect(verified.code, verified.stdout).toBe(0);
      const recount = (JSON.parse(verified.stdout) as VerifyReport).recount!;
      expect(recount.windows_checked).toBe(24);
      expect(recount.windows_ok).toBe(24);
      expect(recount.requests).toBe(counts(verified.requests).length);
      expect(recount.requests).toBe(1 + 3 + 3);

      for (const r of [planned, first, pending, second, verified]) {
        expect(r.refused).toBe(0);
        expect(r.refusals).toHaveLength(0);
        for (const u of r.requests) expect(chainIdsOf(u), u.href).toBeLessThanOrEqual(LIMIT);
      }
      expect(await exportedIds('wallet-set')).toEqual(truth);
    },
  );

  it(
    'chain_ids_per_request 5: the blocks dataset asks resolve for 5 chains at most, a row per block and chain',
    { timeout: 60_000 },
    async () => {
      expect(sharingBlocks()).toHaveLength(10);
      const { file, blocks } = blocksJob('blocks-set');
      const r = await viaProxy(['run', file, '--json', ...SET]);
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as RunReport).rows).toBe(10 * blocks);
      expect(r.refused).toBe(0);
      const resolves = r.requests.filter((u) => u.pathname.includes('/resolve/'));
      expect(resolves.some((u) => chainIdsOf(u) > 1)).toBe(true);
      for (const u of r.requests) expect(chainIdsOf(u), u.href).toBeLessThanOrEqual(LIMIT);
      const rows = await readTable(join(tmp.dir, 'blocks-set'), 'blocks', 'ndjson');
      expect(new Set(rows.map((x) => `${x.chain_id}:${x.block_number}`)).size).toBe(10 * blocks);
    },
  );

  it(
    'the default 55: the run halves it on the refusal, logged once, and completes exactly (list and resolve requests)',
    { timeout: 120_000 },
    async () => {
      const wallet = await viaProxy(['run', walletJob('wallet-halved'), '--json']);
      expect(wallet.code, wallet.stderr).toBe(0);
      expect(wallet.refusals).toHaveLength(1);
      expect(await exportedIds('wallet-halved')).toEqual(truthIds());

      const { file, blocks } = blocksJob('blocks-halved');
      const r = await viaProxy(['run', file, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.refusals).toHaveLength(1);
      expect(r.refusals[0]).toMatch(/sends at most [1-5]\b/);
      expect((JSON.parse(r.stdout) as RunReport).rows).toBe(10 * blocks);
      // Once halved, the run's later resolve requests name at most what the service takes.
      const resolves = r.requests.filter((u) => u.pathname.includes('/resolve/') && chainIdsOf(u) > 1);
      const last = resolves.slice(-resolves.length / 2);
      for (const u of last) expect(chainIdsOf(u), u.href).toBeLessThanOrEqual(LIMIT);
      const rows = await readTable(join(tmp.dir, 'blocks-halved'), 'blocks', 'ndjson');
      expect(new Set(rows.map((x) => `${x.chain_id}:${x.block_number}`)).size).toBe(10 * blocks);
      expect(rows).toHaveLength(10 * blocks);
    },
  );
});
