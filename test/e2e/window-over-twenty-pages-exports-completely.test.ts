/**
 * Issue 3: a window that needs more than 20 pages of 1000 rows (the service's page cap) exports
 * completely: every row once, none lost at the split, none duplicated — also when the service
 * itself repeats self-transfers (its UNION ALL duplicate).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@insight-export/sandbox';
import { expectedTransactionRow, exportJob, readTable, truthWalletTransactions, type CanonRow } from '../helpers/export.js';
import { useTempDir } from '../helpers/temp-dir.js';

const PAGE_CAP_ROWS = 21 * 1000; // pages 0..20 of 1000 rows

const tmp = useTempDir('e2e-page-cap-');

describe.each([
  { name: 'plain service', duplicateSelfTransfers: false },
  { name: 'service repeating self-transfers', duplicateSelfTransfers: true },
])('one block window of 25k wallet rows on chain 1 ($name)', ({ name, duplicateSelfTransfers }) => {
  let sandbox: Sandbox;
  let got: CanonRow[];
  let expected: CanonRow[];
  let report: Awaited<ReturnType<typeof exportJob>>;
  let windows: { start: number; end: number }[] = [];
  /** Rows the service sends for the window (with its repeats). */
  let served = 0;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 42, transactions: 200_000, duplicateSelfTransfers });
    const chain = sandbox.data.chain(1)!;
    const alice = sandbox.data.wallets[0]!;
    const range = { by: 'block' as const, from: chain.firstBlock, to: chain.headBlock + 1 };
    const dir = join(tmp.dir, name.replace(/\W+/g, '-'));
    report = await exportJob({
      job: {
        name: 'page-cap',
        source: { base_url: 'sandbox', chains: [1] },
        targets: [{ wallet: alice.address, datasets: ['transactions'] }],
        // One grid window of 100k blocks covers the chain's whole span.
        range: { by: 'block', from: range.from, to: range.to, chunk: 100_000 },
        decode: false,
      },
      dir,
      sandbox,
      destination: join(dir, 'out'),
      onPlan: (plan) => (windows = plan.units.map((u) => u.window)),
    });
    got = await readTable(join(dir, 'out'), 'transactions', 'parquet');
    // The run exports up to the chain head minus the safety lag (a range.to past it is clamped):
    // the truth is the rows of the window it planned.
    const exported = { ...range, to: Math.min(range.to, windows[0]!.end) };
    expected = truthWalletTransactions(sandbox.data, alice.address, [1], exported).map((t) => expectedTransactionRow(t, alice.address));
    const query = sandbox.data.parseTransactionsQuery(
      `chain_id=1&filter_block_number_gte=${exported.from}&filter_block_number_lt=${exported.to}`,
    );
    served = sandbox.data.allWalletTransactions(alice.address, query, { duplicateSelfTransfers }).length;
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  it('is one window with more rows than 20 pages can hold', () => {
    expect(windows).toHaveLength(1);
    expect(expected.length).toBeGreaterThan(PAGE_CAP_ROWS);
    expect(report.status).toBe('succeeded');
    // the service answered more pages than one paging sequence may ask for: the window was split
    expect(sandbox.stats().byRoute.transactions).toBeGreaterThan(21);
    // the repeating service really sends more rows than there are transactions
    if (duplicateSelfTransfers) expect(served).toBeGreaterThan(expected.length);
    else expect(served).toBe(expected.length);
  });

  it('exports every row exactly once', () => {
    expect(report.rows).toBe(expected.length);
    expect(got).toHaveLength(expected.length);
    const ids = got.map((r) => r.item_id as string);
    expect(new Set(ids).size).toBe(ids.length);
    const want = new Map(expected.map((r) => [r.item_id as string, r]));
    for (const row of got) expect(row).toEqual(want.get(row.item_id as string));
  });

  it('keeps the rows in (block_number, transaction_index) order inside each file', async () => {
    // One file here: the order read back is the file order.
    const keys = got.map((r) => [Number(r.block_number), Number(r.transaction_index)] as const);
    for (let i = 1; i < keys.length; i++) {
      const [b0, t0] = keys[i - 1]!;
      const [b1, t1] = keys[i]!;
      expect(b1 > b0 || (b1 === b0 && t1 > t0)).toBe(true);
    }
  });
});
