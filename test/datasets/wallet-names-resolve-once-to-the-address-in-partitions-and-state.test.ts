import { describe, expect, it, vi } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import { useSandbox } from '../helpers/sandbox.js';
import { exportJob, listFiles } from './export-helpers.js';

const sandbox = useSandbox({ seed: 42 });

const job = (wallet: string) => `name: named-wallet
source: { chains: [1, 8453] }
targets:
  - wallet: ${wallet}
    datasets: [transactions, aggregates]
aggregates:
  aggregate: ["count() as n"]
range: { from: "2024-02-01", to: "2024-02-03", chunk: 1d }
`;

describe('a wallet given by name', () => {
  it('is resolved once per run; files, partitions and state use the address, so the address form of the job finds the work done', async () => {
    const alice = sandbox.data.wallets[0]!;
    expect(alice.name).toBe('alice.eth');
    // The run also resolves block numbers and addresses (chain heads and checks): count the name's.
    const resolves = vi.spyOn(InsightClient.prototype, 'resolve');
    const res = await exportJob(sandbox, job('alice.eth'));
    const nameResolves = resolves.mock.calls.filter(([input]) => input === 'alice.eth').length;
    resolves.mockRestore();
    expect(res.report.status).toBe('succeeded');
    expect(nameResolves).toBe(1);

    const rows = await res.rows('transactions/');
    const truth = [1, 8453].flatMap((chainId) =>
      [...sandbox.data.transactions(chainId)].filter(
        (t) => (t.from_address === alice.address || t.to_address === alice.address) && t.block_timestamp < Date.UTC(2024, 1, 3) / 1000,
      ),
    );
    expect(rows.length).toBe(truth.length);
    expect(rows.every((r) => r.wallet_address === alice.address)).toBe(true);

    const state = (await listFiles(res.dir)).filter((f) => f.startsWith('_state/'));
    const keys = [...res.files, ...state.filter((f) => f.includes('/units/') || f.includes('/segments/'))];
    expect(keys.length).toBeGreaterThan(8);
    for (const key of keys) {
      expect(key).toContain(alice.address);
      expect(key).not.toContain('alice');
    }

    // The same job written with the address: nothing left to do, nothing resolved but the newest
    // window edge of each chain (the reorganisation check: one block number per chain).
    const resolvedAgain = vi.spyOn(InsightClient.prototype, 'resolve');
    const again = await exportJob(sandbox, job(`"${alice.address}"`), { dir: res.dir.replace(/\/out$/, '') });
    const inputs = resolvedAgain.mock.calls.map(([input]) => input);
    resolvedAgain.mockRestore();
    expect(again.report.status).toBe('succeeded');
    expect(again.report.windows.planned).toBe(0);
    expect(inputs.filter((input) => !/^\d+$/.test(input))).toEqual([]);
    expect(inputs.length).toBeLessThanOrEqual(2);
    expect(again.files).toEqual(res.files);
  });
});
