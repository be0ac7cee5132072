/**
 * The service's head, never the clock, bounds every window: a service whose index lags its data
 * (the sandbox's indexedUntil) under a fixed `to` in the past (long before the clock: the case the
 * clock once settled alone), a fixed `to` in the future and `to: latest`. No window past the
 * served head minus the safety lag is committed; once the service serves more, the next run
 * exports it, and the files hold exactly the source's rows.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportJob, expectedTransactionRow, readTable, truthWalletTransactions } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import type { WindowRecord } from '../../src/state/window-state.js';
import type { RunReport } from '../../src/run/report.js';
import { completedWindows } from '../helpers/completed-windows.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('served-head-');
const CHAINS = [1, 8453];
const LAG = 900; // the time axis' default safety lag
const from = Date.UTC(2024, 1, 1) / 1000;

async function markers(dest: string, job: string): Promise<WindowRecord[]> {
  return (await completedWindows(dest, job)).map((w) => w.record);
}

/** The files equal the source's rows of each chain up to where the run says it exported. */
async function expectExactUpTo(dest: string, wallet: string, ends: Map<number, number>): Promise<void> {
  const want = CHAINS.flatMap((c) => truthWalletTransactions(sandbox.data, wallet, [c], { by: 'time', from, to: ends.get(c)! }));
  const expected = want.map((t) => expectedTransactionRow(t, wallet));
  // The source's columns (the decoded call's columns are checked elsewhere).
  const columns = Object.keys(expected[0] ?? {});
  const got = (await readTable(dest, 'transactions', 'ndjson')).map((r) => Object.fromEntries(columns.map((k) => [k, r[k]])));
  const byId = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => String(a.item_id).localeCompare(String(b.item_id)));
  expect(got.length).toBe(want.length);
  expect(byId(got)).toEqual(byId(expected));
}

const endsOf = (report: RunReport) => new Map(report.range_clamped.map((c) => [c.chain_id, c.end]));

describe.each([
  ['a fixed `to` long before the clock', '2024-03-01T00:00:00Z'],
  ['a fixed `to` in the future', '2030-01-01T00:00:00Z'],
  ['`to: latest`', 'latest'],
])('a service whose index lags its data, %s', (_, to) => {
  it('commits no window past its head minus the safety lag, and a later run exports the rest exactly', { timeout: 60_000 }, async () => {
    const wallet = sandbox.data.wallets[0]!.address;
    const indexed = Date.UTC(2024, 1, 2, 12) / 1000;
    sandbox.setIndexedUntil(indexed);
    const name = `lag-${to.slice(0, 4)}`;
    const dest = join(tmp.dir, name);
    const job = {
      name,
      source: { base_url: 'sandbox', chains: CHAINS },
      targets: [{ wallet, datasets: ['transactions'] }],
      range: { from: '2024-02-01T00:00:00Z', to, chunk: '6h' },
      output: { format: 'ndjson' },
    };
    const run = () => exportJob({ job, dir: join(tmp.dir, name), sandbox, destination: dest });
    try {
      const first = await run();
      expect(first.status, JSON.stringify(first.failed)).toBe('succeeded');
      const ends = endsOf(first);
      if (to === 'latest') {
        // Not a clamp (latest always ends at the head): the windows say where it ended.
        for (const c of CHAINS)
          ends.set(c, Math.max(...(await markers(dest, name)).filter((m) => m.unit_key.endsWith(`/${c}/time`)).map((m) => m.end)));
      } else {
        expect([...ends.keys()]).toEqual(CHAINS);
      }
      for (const c of CHAINS) {
        // The served head is the last block at or before `indexed`: within a minute of it.
        expect(ends.get(c)!).toBeLessThanOrEqual(indexed - LAG + 1);
        expect(ends.get(c)!).toBeGreaterThan(indexed - LAG + 1 - 60);
      }
      const committed = await markers(dest, name);
      expect(Math.max(...committed.map((m) => m.end))).toBeLessThanOrEqual(indexed - LAG + 1);
      await expectExactUpTo(dest, wallet, ends);

      // The service catches up with its data: the next run exports the rest, up to its new head.
      sandbox.setIndexedUntil(undefined);
      const second = await run();
      expect(second.status, JSON.stringify(second.failed)).toBe('succeeded');
      expect(second.rows).toBeGreaterThan(0);
      const later = new Map<number, number>();
      for (const c of CHAINS) {
        const head = sandbox.data.chain(c)!.headTimestamp;
        later.set(c, head - LAG + 1);
        const newest = Math.max(...(await markers(dest, name)).filter((m) => m.unit_key.endsWith(`/${c}/time`)).map((m) => m.end));
        expect(newest).toBe(head - LAG + 1);
      }
      await expectExactUpTo(dest, wallet, later);
    } finally {
      sandbox.setIndexedUntil(undefined);
    }
  });
});
