/**
 * Issue 30, item 2: a service whose answers carry rows inside the block range asked for that are
 * not the request's (a transaction of another wallet, a log of another contract or event, a row of
 * a chain not asked for) gets none of them written: the files hold exactly the target's rows, and
 * the run report counts the rows dropped by reason, as many as the sandbox sent. Pages are small
 * (pageSize 20) so that full answers, whose foreign rows count toward the limit, are split.
 */
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { createLogger } from '../../src/log.js';
import {
  expectedTransactionRow,
  expectedTransferRow,
  exportJob,
  readTable,
  truthContractEvents,
  truthWalletTransactions,
  unixDay,
  type CanonRow,
  type OutputFormat,
} from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const CHAINS = [1, 8453, 42161];
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const RANGE = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-03') };
const tmp = useTempDir('foreign-rows-');
const sandbox = useSandbox({ seed: 42, transactions: 8_000, foreignRows: 0.1 });

async function expectTable(root: string, table: string, format: OutputFormat, expected: CanonRow[]): Promise<void> {
  const got = await readTable(root, table, format);
  const want = new Map(expected.map((r) => [r.item_id as string, r]));
  expect(got.length).toBe(expected.length);
  expect(new Set(got.map((r) => r.item_id))).toEqual(new Set(want.keys()));
  for (const row of got) expect(row).toEqual(want.get(row.item_id as string));
}

describe('rows of another wallet, contract, event or chain', () => {
  it.each(['ndjson', 'parquet'] as OutputFormat[])(
    'are dropped and counted in the run report by reason: %s',
    async (format) => {
      const alice = sandbox.data.wallet('alice.eth')!.address;
      const tokens = sandbox.data.contracts.filter((c) => c.symbol === 'SUSD');
      const dir = join(tmp.dir, format);
      sandbox.resetStats();
      const lines: any[] = [];
      const destination = new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      });
      const report = await exportJob({
        logger: createLogger({ level: 'warn', destination }),
        job: {
          name: 'foreign-rows',
          source: { base_url: 'sandbox', chains: CHAINS },
          targets: [
            { wallet: alice, datasets: ['transactions'] },
            ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
          ],
          range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
          decode: false,
          output: { format },
        },
        dir,
        sandbox,
        destination: join(dir, 'out'),
        pageSize: 20,
      });
      expect(report.status).toBe('succeeded');

      const sent = sandbox.stats().foreignRowsSent;
      for (const kind of ['other_wallet', 'other_contract', 'other_event', 'other_chain'] as const) expect(sent[kind]).toBeGreaterThan(0);
      expect(report.rows_rejected).toEqual({
        other_chain: sent.other_chain,
        outside_slice: 0,
        other_wallet: sent.other_wallet,
        other_contract: sent.other_contract,
        other_event: sent.other_event,
      });
      // One warning per window that dropped rows, with one of them.
      const warnings = lines.filter((l) => l.msg === 'the service sent rows of another target, chain or slice; dropped');
      expect(warnings.length).toBeGreaterThan(0);
      expect(new Set(warnings.map((l) => `${l.unit} ${l.window}`)).size).toBe(warnings.length);
      expect(warnings.reduce((n, l) => n + Object.values(l.rejected as Record<string, number>).reduce((a, b) => a + b, 0), 0)).toBe(
        Object.values(sent).reduce((a, b) => a + b!, 0),
      );
      for (const l of warnings) expect(Object.keys(l.example).sort()).toEqual(['block', 'chainId', 'itemId', 'reason']);
      const byChain = Object.values(report.by_chain).reduce((n, f) => n + Object.values(f.rows_rejected).reduce((a, b) => a + b!, 0), 0);
      expect(byChain).toBe(Object.values(sent).reduce((a, b) => a + b!, 0));

      const transactions = truthWalletTransactions(sandbox.data, alice, CHAINS, RANGE);
      const events = tokens.flatMap((t) => truthContractEvents(sandbox.data, t.address, TRANSFER, [t.chainId], RANGE));
      expect(transactions.length).toBeGreaterThan(200);
      expect(report.rows).toBe(transactions.length + events.length);
      const root = join(dir, 'out');
      await expectTable(
        root,
        'transactions',
        format,
        transactions.map((t) => expectedTransactionRow(t, alice)),
      );
      await expectTable(
        root,
        eventTableForSignature(TRANSFER),
        format,
        events.map((e) => expectedTransferRow(e, sandbox.data)),
      );
    },
    60_000,
  );
});
