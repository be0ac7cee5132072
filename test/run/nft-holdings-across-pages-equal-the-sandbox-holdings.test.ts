import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers/sandbox.js';
import { exportJob, type JsonRow } from '../datasets/export-helpers.js';

const PAGE = 7; // collections per explorer page: wallet 0 needs many pages
const sandbox = useSandbox({ seed: 42, nftPageSize: PAGE });

const TYPE_OF = { erc721: 'ERC-721', erc1155: 'ERC-1155' } as Record<string, string>;

/** What the sandbox says the wallet holds on a chain, as the rows the export should have. */
function expectedRows(address: string, chainId: number, kinds: string[]) {
  return sandbox.data
    .nftHoldings(address, chainId)
    .filter((h) => kinds.includes(h.contract.kind))
    .flatMap((h) =>
      h.tokens.map((t) => ({
        chain_id: chainId,
        token_address: h.contract.address,
        token_type: TYPE_OF[h.contract.kind],
        token_name: h.contract.name,
        token_symbol: h.contract.symbol,
        collection_amount: h.tokens.reduce((a, x) => a + BigInt(x.amount), 0n).toString(),
        token_id: t.id,
        value: t.amount,
      })),
    );
}

function project(rows: JsonRow[]) {
  return rows.map((r) => ({
    chain_id: r.chain_id,
    token_address: r.token_address,
    token_type: r.token_type,
    token_name: r.token_name,
    token_symbol: r.token_symbol,
    collection_amount: r.collection_amount,
    token_id: r.token_id,
    value: r.value,
  }));
}

describe('the nft_holdings dataset', () => {
  it("a named wallet's holdings on two chains, over many explorer pages, equal the sandbox's holdings; one row per token instance", async () => {
    const alice = sandbox.data.wallets[0]!;
    sandbox.resetStats();
    const before = new Date().toISOString().slice(0, 10);
    const res = await exportJob(
      sandbox,
      `name: holdings
source: { chains: [1, 8453] }
targets:
  - wallet: ${alice.name}
    datasets: [nft_holdings]
`,
    );
    expect(res.report.status).toBe('succeeded');
    // The snapshot day is the run's UTC day (read from the files, in case midnight just passed).
    const today = /\/date=(\d{4}-\d{2}-\d{2})\//.exec(res.files[0]!)![1]!;
    expect([before, new Date().toISOString().slice(0, 10)]).toContain(today);
    const collectionsOn1 = sandbox.data.nftHoldings(alice.address, 1).length;
    expect(collectionsOn1).toBeGreaterThan(3 * PAGE);
    expect(sandbox.stats().byRoute.nft).toBe(
      Math.ceil(collectionsOn1 / PAGE) + Math.ceil(sandbox.data.nftHoldings(alice.address, 8453).length / PAGE),
    );

    for (const chainId of [1, 8453]) {
      const rows = (await res.rows(`nft_holdings/chain_id=${chainId}/date=${today}/`)).filter((r) => r.chain_id === chainId);
      const expected = expectedRows(alice.address, chainId, ['erc721', 'erc1155']);
      expect(expected.length).toBeGreaterThan(0);
      expect(project(rows)).toEqual(expected);
      for (const r of rows) {
        expect(r.item_id).toBe(`${chainId}:${alice.address}:${r.token_address}:${r.token_id}:${today}`);
        expect(r.snapshot_date).toBe(today);
        expect(r.wallet_address).toBe(alice.address);
        expect(r.holder_address).toBe(alice.address);
        expect(r.is_unique).toBe(r.token_type === 'ERC-721');
        expect(r.owner_address).toBe(r.token_type === 'ERC-721' ? alice.address : null);
        const metadata = JSON.parse(r.metadata);
        expect(metadata.name).toBe(`${r.token_name} #${r.token_id}`);
        expect(metadata.attributes.length).toBeGreaterThan(0);
      }
      expect(new Set(rows.map((r) => r.item_id)).size).toBe(rows.length);
    }
    expect(res.files.every((f) => f.startsWith('nft_holdings/chain_id=') && f.includes(`/date=${today}/${alice.address}__`))).toBe(true);

    // The same day again: the snapshot is taken, nothing is asked or written twice.
    sandbox.resetStats();
    const again = await exportJob(
      sandbox,
      `name: holdings\nsource: { chains: [1, 8453] }\ntargets:\n  - wallet: ${alice.name}\n    datasets: [nft_holdings]\n`,
      {
        dir: res.dir.replace(/\/out$/, ''),
      },
    );
    expect(again.report.windows.planned).toBe(0);
    expect(sandbox.stats().byRoute.nft ?? 0).toBe(0);
    expect(again.files).toEqual(res.files);
  });

  it('nft_types keeps only the token standards asked for', async () => {
    const wallet = sandbox.data.wallets[1]!;
    const res = await exportJob(
      sandbox,
      `name: holdings-1155
source: { chains: [1] }
targets:
  - wallet: "${wallet.address}"
    datasets: [nft_holdings]
    nft_types: [ERC-1155]
`,
    );
    expect(res.report.status).toBe('succeeded');
    const rows = await res.rows('nft_holdings/');
    const expected = expectedRows(wallet.address, 1, ['erc1155']);
    expect(expected.length).toBeGreaterThan(0);
    expect(expectedRows(wallet.address, 1, ['erc721']).length).toBeGreaterThan(0);
    expect(project(rows)).toEqual(expected);
  });
});
