import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildSandboxData, startSandbox, type SandboxData } from '@insight-export/sandbox';

function digest(data: SandboxData): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ chains: data.chains, wallets: data.wallets, contracts: data.contracts }));
  for (const chain of data.chains) {
    for (const tx of data.transactions(chain.chainId)) h.update(JSON.stringify(tx));
    for (const log of data.logs(chain.chainId)) h.update(JSON.stringify(log));
    for (let b = chain.firstBlock; b <= chain.headBlock; b += 997) h.update(JSON.stringify(data.block(chain.chainId, b)));
    for (const w of data.wallets.slice(0, 3)) h.update(JSON.stringify(data.nftHoldings(w.address, chain.chainId)));
  }
  return h.digest('hex');
}

describe('sandbox data determinism', () => {
  it('builds byte-identical data from the same seed and size', () => {
    expect(digest(buildSandboxData({ seed: 5, transactions: 3_000 }))).toBe(digest(buildSandboxData({ seed: 5, transactions: 3_000 })));
  });

  it('builds different data from a different seed', () => {
    expect(digest(buildSandboxData({ seed: 5, transactions: 3_000 }))).not.toBe(digest(buildSandboxData({ seed: 6, transactions: 3_000 })));
  });

  it('serves byte-identical responses from two servers with the same seed', async () => {
    const a = await startSandbox({ seed: 9, transactions: 2_000 });
    const b = await startSandbox({ seed: 9, transactions: 2_000 });
    try {
      const path = `/wallets/${a.data.wallets[0]!.address}/transactions?limit=50&sort_by=block_number&decode=true`;
      const [ta, tb] = await Promise.all([fetch(a.url + path).then((r) => r.text()), fetch(b.url + path).then((r) => r.text())]);
      expect(JSON.parse(ta).data).toHaveLength(150);
      expect(ta).toBe(tb);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
