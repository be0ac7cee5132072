import { describe, expect, it } from 'vitest';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ seed: 42 }); // the default 20k set: wallet 0 holds >= 3 pages of collections

async function allPages(address: string, query: string) {
  const pages: any[] = [];
  let params: Record<string, string | number> | null = {};
  while (params) {
    const qs = new URLSearchParams(query);
    for (const [k, v] of Object.entries(params)) qs.set(k, String(v));
    const { status, body } = await getJson(`${sandbox.explorerUrl}/addresses/${address}/nft/collections?${qs}`);
    expect(status).toBe(200);
    pages.push(body);
    params = body.next_page_params;
    if (pages.length > 50) throw new Error('no end');
  }
  return pages;
}

describe('NFT collections route', () => {
  it('pages wallet 0 over >= 3 pages by sending next_page_params back; the last page has null', async () => {
    const alice = sandbox.data.wallets[0]!;
    const pages = await allPages(alice.address, 'type=ERC-721,ERC-1155');
    expect(pages.length).toBeGreaterThanOrEqual(3);
    for (const p of pages.slice(0, -1)) expect(p.items).toHaveLength(50);
    expect(pages[pages.length - 1].next_page_params).toBeNull();
    const items = pages.flatMap((p) => p.items);
    const truth = sandbox.data.nftHoldings(alice.address, 1);
    expect(items.map((i: any) => i.token.address)).toEqual(truth.map((h) => h.contract.address));
    items.forEach((item: any, i: number) => {
      const h = truth[i]!;
      expect(item.token.type).toBe(h.contract.kind === 'erc721' ? 'ERC-721' : 'ERC-1155');
      expect(item.token_instances.map((t: any) => [t.id, t.value])).toEqual(h.tokens.map((t) => [t.id, t.amount]));
      expect(item.amount).toBe(h.tokens.reduce((a, t) => a + BigInt(t.amount), 0n).toString());
      for (const inst of item.token_instances) {
        expect(inst.holder_address_hash).toBe(alice.address);
        expect(inst.metadata).toMatchObject({ name: expect.any(String), description: expect.any(String), image_url: expect.any(String) });
        expect(inst.metadata.attributes.length).toBeGreaterThan(0);
      }
    });
  });

  it('holds exactly the ERC-721 tokens whose last Transfer log went to the address', () => {
    const alice = sandbox.data.wallets[0]!;
    const owner = new Map<string, string>();
    for (const l of sandbox.data.logs(1)) {
      if (sandbox.data.contract(l.address)!.kind !== 'erc721') continue;
      owner.set(`${l.address}:${BigInt(l.topics[3]!)}`, '0x' + l.topics[2]!.slice(26));
    }
    const fromLogs = [...owner.entries()]
      .filter(([, o]) => o === alice.address)
      .map(([k]) => k)
      .sort();
    const fromHoldings = sandbox.data
      .nftHoldings(alice.address, 1)
      .filter((h) => h.contract.kind === 'erc721')
      .flatMap((h) => h.tokens.map((t) => `${h.contract.address}:${t.id}`))
      .sort();
    expect(fromHoldings).toEqual(fromLogs);
  });

  it('filters by type and by chain_id', async () => {
    const alice = sandbox.data.wallets[0]!;
    const only1155 = (await allPages(alice.address, 'type=ERC-1155')).flatMap((p) => p.items);
    expect(only1155.length).toBe(sandbox.data.nftHoldings(alice.address, 1).filter((h) => h.contract.kind === 'erc1155').length);
    expect(only1155.every((i: any) => i.token.type === 'ERC-1155')).toBe(true);
    const base = (await allPages(alice.address, 'chain_id=8453')).flatMap((p) => p.items);
    expect(base.map((i: any) => i.token.address)).toEqual(sandbox.data.nftHoldings(alice.address, 8453).map((h) => h.contract.address));
  });

  it('answers an address without NFTs with an empty last page', async () => {
    const { body } = await getJson(`${sandbox.explorerUrl}/addresses/0x${'ab'.repeat(20)}/nft/collections?type=ERC-721`);
    expect(body).toEqual({ items: [], next_page_params: null });
  });
});
