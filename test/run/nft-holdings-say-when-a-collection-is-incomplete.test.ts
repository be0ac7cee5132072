/**
 * Blockscout lists at most 9 token instances per collection. A wallet holding 25 tokens of one
 * collection: without the ungrouped addresses/<hash>/nft route its rows say the collection is
 * incomplete and the run report warns; with the route the export holds all 25.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { exportJob, type JsonRow } from '../datasets/export-helpers.js';
import {
  serveReadInterface,
  type ReadInterfaceSource,
  type Sandbox,
  type SandboxOptions,
  type SandboxServer,
} from '@insight-export/sandbox';
import { nftCollection, nftCollectionsPage, nftInstancesPage, nftOwner, type NftHoldingsSource } from '@insight-export/sandbox';
import type { ContractKind } from '@insight-export/sandbox';

const WALLET = '0x5aeda56215b167893e80b4fe645ba6d5bab767de';
const addr = (n: number) => `0x${n.toString(16).padStart(4, '0').repeat(10)}`;

/** The wallet's holdings: 25 tokens of one ERC-721, 3 of another, 5 ids (balance 3 each) of an ERC-1155. */
const HELD: { address: string; kind: ContractKind; tokens: { id: string; amount: string }[] }[] = [
  { address: addr(0xa1), kind: 'erc721', tokens: Array.from({ length: 25 }, (_, i) => ({ id: String(1000 + i), amount: '1' })) },
  { address: addr(0xb2), kind: 'erc721', tokens: ['7', '8', '9'].map((id) => ({ id, amount: '1' })) },
  { address: addr(0x0c), kind: 'erc1155', tokens: ['1', '2', '3', '4', '5'].map((id) => ({ id, amount: '3' })) },
];

const holdings: NftHoldingsSource<number, (typeof HELD)[number]> = {
  chain: (chainId) => (chainId === undefined || chainId === 1 ? 1 : undefined),
  held: (_c, holder, kinds) =>
    holder === WALLET ? HELD.filter((h) => kinds.includes(h.kind)).sort((a, b) => (a.address < b.address ? -1 : 1)) : [],
  collection: (_c, holder, h) =>
    nftCollection(
      { address: h.address, kind: h.kind, name: `C${h.address.slice(2, 6)}`, symbol: 'C', decimals: null, holders: '1', totalSupply: null },
      holder,
      h.tokens.map((t) => ({ id: t.id, amount: t.amount, imageUrl: null, metadata: { name: `#${t.id}` } })),
      () => nftOwner(holder, false, null),
    ),
};

const unused = () => {
  throw new Error('not served by this fixture');
};
const source: ReadInterfaceSource = {
  parseTransactionsQuery: unused,
  parseEventsQuery: unused,
  walletTransactions: unused,
  contractEvents: unused,
  resolve: unused,
  decode: unused,
  nftCollectionsPage: (address, params) => nftCollectionsPage(address, params, holdings),
  nftInstancesPage: (address, params) => nftInstancesPage(address, params, holdings),
};

/** The NFT behaviours of Blockscout (--profile indexer), the ungrouped route on or off. */
const BLOCKSCOUT: SandboxOptions = {
  nftPageSize: 2,
  nftInstanceLimit: 9,
  nftDistinctAmount: true,
  nftChecksummed: true,
  nftTokenKeys: 'new',
  nftTypeOrder: true,
  nftEchoPageParams: true,
};

const servers: SandboxServer<ReadInterfaceSource>[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function exportHoldings(
  opts: SandboxOptions,
): Promise<{ rows: JsonRow[]; report: Awaited<ReturnType<typeof exportJob>>['report']; server: SandboxServer<ReadInterfaceSource> }> {
  const server = await serveReadInterface(source, opts);
  servers.push(server);
  const res = await exportJob(
    server as unknown as Sandbox,
    `name: holdings\nsource: { chains: [1] }\ntargets:\n  - wallet: "${WALLET}"\n    datasets: [nft_holdings]\n`,
  );
  return { rows: await res.rows('nft_holdings/'), report: res.report, server };
}

const ids = (rows: JsonRow[], token: string) =>
  rows
    .filter((r) => r.token_address === token)
    .map((r) => r.token_id)
    .sort((a, b) => Number(a) - Number(b));

describe('nft_holdings against an explorer that lists at most 9 instances per collection', () => {
  it('without the ungrouped route: the 25-token collection has 9 rows that say 9 of 25, incomplete, and the report warns', async () => {
    const { rows, report } = await exportHoldings(BLOCKSCOUT);
    expect(report.status).toBe('succeeded');
    const big = rows.filter((r) => r.token_address === addr(0xa1));
    expect(ids(rows, addr(0xa1))).toEqual(Array.from({ length: 9 }, (_, i) => String(1016 + i))); // the highest 9 ids
    for (const r of big) {
      expect(r.collection_instances_returned).toBe(9);
      expect(r.collection_instances_held).toBe(25);
      expect(r.collection_complete).toBe(false);
    }
    // The others are whole, and say so (the ERC-1155 amount counts its 5 ids, not their balance of 15).
    for (const token of [addr(0xb2), addr(0x0c)]) {
      const theirs = rows.filter((r) => r.token_address === token);
      expect(theirs.length).toBe(HELD.find((h) => h.address === token)!.tokens.length);
      for (const r of theirs)
        expect([r.collection_complete, r.collection_instances_returned, r.collection_instances_held]).toEqual([
          true,
          theirs.length,
          theirs.length,
        ]);
    }
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]!.warning).toContain(addr(0xa1));
    expect(report.warnings[0]!.warning).toMatch(/9 token instances exported of 25 held/);
  });

  it('with the ungrouped route: the export holds all 25 tokens, complete, and no warning', async () => {
    const { rows, report, server } = await exportHoldings({ ...BLOCKSCOUT, nftUngroupedRoute: true });
    expect(report.status).toBe('succeeded');
    expect(report.warnings).toEqual([]);
    expect(ids(rows, addr(0xa1))).toEqual(HELD[0]!.tokens.map((t) => t.id));
    for (const r of rows.filter((x) => x.token_address === addr(0xa1))) {
      expect([r.collection_complete, r.collection_instances_returned, r.collection_instances_held]).toEqual([true, 25, 25]);
      expect(r.token_name).toBe('C00a1');
    }
    expect(rows.length).toBe(25 + 3 + 5);
    expect(new Set(rows.map((r) => r.item_id)).size).toBe(rows.length);
    expect(server.stats().byRoute['nft-list']).toBeGreaterThan(1); // the route was paged
  });

  it("the contract's explorer (every instance, ERC-1155 amount the summed balance) needs no ungrouped route", async () => {
    const { rows, report, server } = await exportHoldings({ nftPageSize: 2 });
    expect(report.warnings).toEqual([]);
    expect(rows.length).toBe(25 + 3 + 5);
    expect(rows.every((r) => r.collection_complete === true)).toBe(true);
    expect(rows.filter((r) => r.token_type === 'ERC-1155').map((r) => r.collection_amount)).toEqual(['15', '15', '15', '15', '15']);
    expect(server.stats().byRoute.unknown ?? 0).toBe(0);
  });
});
