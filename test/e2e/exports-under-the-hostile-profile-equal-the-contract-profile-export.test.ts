/**
 * Issue 30: under --profile hostile (the real indexer's paging, plus rows repeated from earlier
 * pages, 200 answers that are not a page, and rows of another wallet, contract, event or chain
 * mixed into list answers) the demo job as shipped and a wallet + events job of more than 100,000
 * rows export exactly the rows the contract profile gives over the same data: the same item_id
 * set, no item_id twice, every field equal. Issue 42: the hostile profile also answers
 * inconsistently for a while (a lagging replica, empty answers, a stale cache...), which no single
 * answer shows; once the service is consistent again, the next run's settle recount makes the
 * files exact without an operator.
 */
import { readFile } from 'node:fs/promises';
import path, { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSandboxData, type SandboxOptions } from '@insight-export/sandbox';
import type { RunReport } from '../../src/run/report.js';
import { exportJob, type JsonRow } from '../datasets/export-helpers.js';
import { useSandbox } from '../helpers/sandbox.js';
import { LONG_TESTS, longModeTimeout } from '../helpers/long-tests.js';

const DEMO = resolve(import.meta.dirname, '../../jobs/demo.yaml');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

/** Runs the job against the hostile service, makes the service consistent, and runs it again into the same folder. */
async function exportThenSettle(
  hostile: ReturnType<typeof useSandbox>,
  yaml: string,
): Promise<{ first: RunReport; settled: Awaited<ReturnType<typeof exportJob>> }> {
  const first = await exportJob(hostile, yaml);
  hostile.consistent();
  const settled = await exportJob(hostile, yaml, { dir: path.dirname(first.dir) });
  expect(settled.report.status).toBe('succeeded');
  return { first: first.report, settled };
}

/** The same data served as the contract documents it and as a hostile server does. */
function sandboxPair(opts: SandboxOptions): { contract: ReturnType<typeof useSandbox>; hostile: ReturnType<typeof useSandbox> } {
  const data = buildSandboxData({ seed: opts.seed, transactions: opts.transactions });
  return { contract: useSandbox({ ...opts, data }), hostile: useSandbox({ ...opts, data, profile: 'hostile' }) };
}

/** Every row of `got` is the row of `truth` with its item_id, each once, and none of `truth` is missing. */
function expectSameRows(got: JsonRow[], truth: JsonRow[]): void {
  const want = new Map(truth.map((r) => [r.item_id as string, JSON.stringify(r)]));
  expect(want.size).toBe(truth.length);
  const seen = new Set<string>();
  const wrong: JsonRow[] = [];
  for (const row of got) {
    const id = row.item_id as string;
    if (seen.has(id) || want.get(id) !== JSON.stringify(row)) wrong.push(row);
    seen.add(id);
  }
  expect(wrong.slice(0, 3)).toEqual([]);
  expect(seen.size).toBe(want.size);
  expect(got.length).toBe(truth.length);
}

/**
 * The hostile server sent rows of every foreign kind, and the run dropped them: each counted in
 * `rows_rejected` when its answer was used, or with the whole answer when the answer was refused
 * (a bad answer, asked again). The sandbox counts the foreign rows it put into an answer before an
 * inconsistency may replace that answer, so the run never counts more than were sent, and counts
 * fewer only when it refused answers. (Exact equality without refused answers:
 * test/run/rows-of-another-wallet-contract-event-or-chain-are-dropped-and-counted.test.ts.)
 */
function expectForeignRowsDropped(report: RunReport, sent: Record<string, number | undefined>): void {
  expect(report.status).toBe('succeeded');
  const refused = Object.values(report.bad_answers ?? {}).reduce((a, b) => a + b, 0);
  for (const kind of ['other_wallet', 'other_contract', 'other_event', 'other_chain'] as const) {
    expect(sent[kind], kind).toBeGreaterThan(0);
    expect(report.rows_rejected[kind], kind).toBeGreaterThan(0);
    expect(report.rows_rejected[kind], kind).toBeLessThanOrEqual(sent[kind]!);
    if (report.rows_rejected[kind] < sent[kind]!)
      expect(refused, `${kind}: fewer counted than sent, but no answer refused`).toBeGreaterThan(0);
  }
}

describe('under --profile hostile', () => {
  const demo = sandboxPair({ seed: 42 });

  it('the demo job as shipped exports exactly the rows of the contract profile', async () => {
    const yaml = await readFile(DEMO, 'utf8');
    demo.hostile.resetStats();
    const { first, settled: hostile } = await exportThenSettle(demo.hostile, yaml);
    expectForeignRowsDropped(first, demo.hostile.stats().foreignRowsSent);
    const truth = await exportJob(demo.contract, yaml);
    expect(truth.report.status).toBe('succeeded');
    expect(hostile.files).toEqual(truth.files);
    const rows = await truth.rows();
    expect(rows.length).toBeGreaterThan(1_000);
    expectSameRows(await hostile.rows(), rows);
  }, 60_000);

  // Long mode: 300k transactions, whose whole days from 2024-02-01 to the served end hold 114,868
  // of these rows (125,642 up to the served end; computed with truthWalletTransactions and
  // truthContractEvents per chain): 250k held 93,911 whole-day rows, under the 100,000 asked.
  const big = sandboxPair({ seed: 42, transactions: LONG_TESTS ? 300_000 : 250_000 });
  // The whole range (100k+ rows) takes minutes on a shared 2-core machine: by default the first 6
  // hours; INSIGHT_EXPORT_LONG_TESTS=1 runs all of it: three runs (hostile, settling, contract),
  // 200 s each under load.
  const LIMIT = longModeTimeout(300_000, 3, 200_000);
  const [to, chunk, atLeast] = LONG_TESTS ? ['2024-02-05', '1d', 100_000] : ['2024-02-01T06:00:00Z', '2h', 5_000];

  it(
    `a wallet + events job of ${atLeast.toLocaleString('en')} rows or more exports exactly the rows of the contract profile`,
    async () => {
      const tokens = big.contract.data.contracts.filter((c) => c.symbol === 'SUSD');
      const yaml = `name: hostile-100k
source: { chains: [1, 8453, 42161] }
targets:
  - wallet: alice.eth
    datasets: [transactions]
${tokens.map((t) => `  - contract: "${t.address}"\n    chains: [${t.chainId}]\n    events: ["${TRANSFER}"]`).join('\n')}
range: { from: "2024-02-01", to: "${to}", chunk: ${chunk} }
decode: true
`;
      big.hostile.resetStats();
      const { first, settled: hostile } = await exportThenSettle(big.hostile, yaml);
      expectForeignRowsDropped(first, big.hostile.stats().foreignRowsSent);
      const truth = await exportJob(big.contract, yaml);
      expect(truth.report.status).toBe('succeeded');
      const rows = await truth.rows();
      expect(rows.length).toBeGreaterThanOrEqual(atLeast);
      expectSameRows(await hostile.rows(), rows);
    },
    LIMIT,
  );
});
