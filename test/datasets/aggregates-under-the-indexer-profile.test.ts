/**
 * The aggregates dataset against the open-source indexer's aggregation rows (sandbox
 * `goAggregations`): one rule for empty windows (no row, grouped or not) whichever service, and
 * the wallet route's UNION answers end in a typed error instead of a wrong number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RICH_EVENT_SIGNATURE, startSandbox, type Sandbox } from '@insight-export/sandbox';
import { SANDBOX_PROFILES } from '@insight-export/sandbox';
import { exportJob } from './export-helpers.js';

let contract: Sandbox;
let indexer: Sandbox;
beforeAll(async () => {
  contract = await startSandbox({ seed: 11, transactions: 3_000, richContract: true });
  indexer = await startSandbox({ seed: 11, transactions: 3_000, richContract: true, ...SANDBOX_PROFILES.indexer });
});
afterAll(async () => {
  await contract?.close();
  await indexer?.close();
});

describe('aggregates against the indexer profile', () => {
  it('an ungrouped aggregate has no row for an empty window, against both profiles', async () => {
    const c = contract.data.contracts.find((x) => x.kind === 'rich' && x.chainId === 8453)!;
    // hourly windows over a sparse contract: most are empty
    const job = `name: sparse
source: { chains: [8453] }
targets:
  - contract: "${c.address}"
    events: ["${RICH_EVENT_SIGNATURE}"]
    datasets: [aggregates]
aggregates:
  aggregate: ["count() as n", "max(block_timestamp) as last_time", "sum(block_number) as blocks"]
range: { from: "2024-02-01", to: "2024-02-02", chunk: 1h }
`;
    const [a, b] = [await exportJob(contract, job), await exportJob(indexer, job)];
    expect([a.report.status, b.report.status]).toEqual(['succeeded', 'succeeded']);
    const rows = await a.rows();
    const logs = [...contract.data.logs(8453)].filter(
      (e) => e.address === c.address && e.block_timestamp < Date.parse('2024-02-02') / 1000,
    );
    const hours = new Set(logs.map((e) => e.block_timestamp - (e.block_timestamp % 3600)));
    expect(hours.size).toBeGreaterThan(0);
    expect(hours.size).toBeLessThan(24);
    expect(rows.map((r) => r.window_start).sort()).toEqual([...hours].sort());
    for (const r of rows) {
      const inHour = logs.filter((e) => e.block_timestamp - (e.block_timestamp % 3600) === r.window_start);
      expect([r.n, r.last_time, r.blocks]).toEqual([
        inHour.length,
        Math.max(...inHour.map((e) => e.block_timestamp)),
        inHour.reduce((s, e) => s + e.block_number, 0),
      ]);
      expect(r.insight_export_rows).toBeUndefined();
    }
    expect(await b.rows()).toEqual(rows);
  });

  it("the wallet route's answer of one row per UNION half is a typed error, never a sum", async () => {
    const alice = contract.data.wallets[0]!;
    const job = `name: wallet-total
source: { chains: [1] }
targets:
  - wallet: ${alice.address}
    datasets: [aggregates]
aggregates:
  aggregate: ["count() as n"]
range: { from: "2024-02-01", to: "2024-02-02", chunk: 1d }
`;
    const ok = await exportJob(contract, job);
    expect(ok.report.status).toBe('succeeded');
    const res = await exportJob(indexer, job);
    expect(res.report.status).toBe('failed');
    expect(JSON.stringify(res.report)).toMatch(/AggregateWalletUnionError|answered 2 rows to an ungrouped wallet aggregate/);
    expect(await res.rows()).toEqual([]);
  });

  it("the wallet route's 500 to a grouped aggregate is a typed error saying why", async () => {
    const alice = contract.data.wallets[0]!;
    const job = `name: wallet-grouped
source: { chains: [1] }
targets:
  - wallet: ${alice.address}
    datasets: [aggregates]
aggregates:
  group_by: [status]
  aggregate: ["count() as n"]
range: { from: "2024-02-01", to: "2024-02-02", chunk: 1d }
retries: { max_attempts: 1 }
`;
    const res = await exportJob(indexer, job);
    expect(res.report.status).toBe('failed');
    expect(JSON.stringify(res.report)).toMatch(/cannot group aggregates of a wallet/);
  });
});
