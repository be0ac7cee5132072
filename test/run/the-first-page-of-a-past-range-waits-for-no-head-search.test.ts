/**
 * The first pages of a fixed time range in the past wait for no head search: the search of a
 * window's edge (before its first page) starts from the blocks the check that the chain is served
 * found (the target's newest and oldest rows in the range, asked together: two blocks give a block
 * time), and proves each edge below the newest by its estimate and the block after it, asked
 * together. That the service serves the whole range (its head, never the clock, says so) costs one
 * block aimed just past the range's end and its safety lag, which also bounds every edge search
 * from above: no head search at all. Before, the first edge search of a run searched the head, a
 * round trip per probe, and each edge took up to ~15 more.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { exportJob, startRecordingProxy, truthWalletTransactions } from '../helpers/export.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('past-range-');
const CHAINS = [1, 8453, 42161];

const SIX_HOURS = 21_600;
const iso = (t: number) => new Date(t * 1000).toISOString().replace('.000', '');

it('exports a past range exactly, its first pages after a pair of block requests per window', { timeout: 120_000 }, async () => {
  const alice = sandbox.data.wallets[0]!.address;
  // From the first 6-hour boundary every chain has blocks, to one a day before the head of every chain.
  const from = Math.max(...CHAINS.map((c) => Math.ceil(sandbox.data.chain(c)!.firstTimestamp / SIX_HOURS) * SIX_HOURS));
  const to = Math.min(...CHAINS.map((c) => Math.floor((sandbox.data.chain(c)!.headTimestamp - 86_400) / SIX_HOURS) * SIX_HOURS));
  const windows = (to - from) / SIX_HOURS;
  expect(windows).toBeGreaterThanOrEqual(2);
  const proxy = await startRecordingProxy(sandbox.url);
  try {
    const dest = join(tmp.dir, 'out');
    const report = await exportJob({
      dir: tmp.dir,
      sandbox: { url: proxy.url, explorerUrl: sandbox.explorerUrl },
      destination: dest,
      job: {
        name: 'past-range',
        source: { base_url: 'sandbox', chains: CHAINS },
        targets: [{ wallet: alice, datasets: ['transactions'] }],
        range: { from: iso(from), to: iso(to), chunk: '6h' },
        output: { format: 'ndjson' },
      },
    });
    expect(report.status, JSON.stringify(report.failed)).toBe('succeeded');
    const rows = CHAINS.flatMap((c) => truthWalletTransactions(sandbox.data, alice, [c], { by: 'time', from, to }));
    expect(report.rows).toBe(rows.length);

    // Per chain, before its first page: the block proving the range served, a pair for each of the
    // 4 windows that start together (units_in_flight), and no block for a block time (the served
    // check's two rows give it).
    const firstPage = (c: number) =>
      proxy.requests.findIndex(
        (u) =>
          u.pathname.endsWith('/transactions') &&
          u.searchParams.getAll('chain_id').join(',').split(',').includes(String(c)) &&
          u.searchParams.get('limit') !== '1',
      );
    for (const c of CHAINS) {
      const before = proxy.requests
        .slice(0, firstPage(c))
        .filter((u) => /\/resolve\/\d+$/.test(u.pathname) && u.searchParams.get('chain_id') === String(c));
      expect(before.length, `chain ${c}: ${before.map((u) => u.pathname).join(' ')}`).toBeLessThanOrEqual(1 + 2 * 4);
    }
    // Per chain, in all: the block proving the range served and a pair per edge; no head search.
    const blocksAsked = proxy.requests
      .filter((u) => /\/resolve\/\d+$/.test(u.pathname))
      .map((u) => ({ chainId: Number(u.searchParams.get('chain_id')), n: Number(u.pathname.split('/').pop()) }));
    for (const c of CHAINS) {
      expect(blocksAsked.filter((b) => b.chainId === c).length).toBeLessThanOrEqual(1 + 2 * windows);
    }
  } finally {
    await proxy.close();
  }
});
