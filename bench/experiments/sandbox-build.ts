/**
 * Measures building the sandbox data set: build time and peak RSS.
 *   npx tsx bench/experiments/sandbox-build.ts [transactions=1000000] [seed=42]
 * Target: 1,000,000 transactions in < 30 s.
 */
import { buildSandboxData } from '@insight-export/sandbox';

const transactions = Number(process.argv[2] ?? 1_000_000);
const seed = Number(process.argv[3] ?? 42);
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const data = buildSandboxData({ seed, transactions });
const buildMs = performance.now() - t0;
peakRss = Math.max(peakRss, process.memoryUsage().rss);
// A full wallet-0 page walk and a holdings pass, to show queries stay cheap at this size.
const t1 = performance.now();
const alice = data.wallets[0]!;
const q = data.parseTransactionsQuery(
  'chain_id=1&sort_by=block_number&sort_order=desc&limit=1000&page=20&filter_value_gt=1000000000000000000',
);
const page = data.walletTransactions(alice.address, q);
const queryMs = performance.now() - t1;
const t2 = performance.now();
const holdings = data.nftHoldings(alice.address, 1);
const holdingsMs = performance.now() - t2;
peakRss = Math.max(peakRss, process.memoryUsage().rss);
clearInterval(sampler);
const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
console.log(
  JSON.stringify(
    {
      transactions: data.transactionTotal,
      seed,
      buildSeconds: +(buildMs / 1000).toFixed(2),
      rssBeforeMB: +mb(rssBefore),
      peakRssMB: +mb(peakRss),
      heapUsedMB: +mb(process.memoryUsage().heapUsed),
      wallet0Rows: alice.transactionCount,
      page20FilteredQueryMs: +queryMs.toFixed(1),
      page20Rows: page.data?.length,
      holdingsFirstCallMs: +holdingsMs.toFixed(1),
      wallet0Collections: holdings.length,
    },
    null,
    2,
  ),
);
