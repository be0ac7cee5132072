import { describe, expect, it } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import { PaginationLoopError } from '../../src/source/errors.js';
import { WALLET, fakeServer, sendJson } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const { servers, clients } = closeAfterEach();

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const item = (n: number) => ({
  token: { address: addr(n), type: 'ERC-721', name: `C${n}` },
  amount: '1',
  token_instances: [{ id: String(n), owner: null }],
});

async function start(pages: { items: unknown[]; next: Record<string, unknown> | null }[]) {
  const server = await fakeServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    const cursor = u.searchParams.get('token_contract_address_hash');
    const index = cursor === null ? 0 : pages.findIndex((p, i) => i > 0 && addr(i * 100) === cursor);
    const page = pages[index]!;
    sendJson(res, 200, { items: page.items, next_page_params: page.next });
  });
  servers.push(server);
  const client = new InsightClient({ baseUrl: `${server.url}/insights/v1`, maxAttempts: 1 });
  clients.push(client);
  return { server, client };
}

describe('NFT collections paging', () => {
  it('follows next_page_params, sending every key back, until null', async () => {
    const pages = [
      { items: [item(1), item(2)], next: { token_contract_address_hash: addr(100), token_type: 'ERC-721', items_count: 2 } },
      { items: [item(3), item(4)], next: { token_contract_address_hash: addr(200), token_type: 'ERC-1155', items_count: 4 } },
      { items: [item(5)], next: null },
    ];
    const { server, client } = await start(pages);
    const got: string[] = [];
    for await (const c of client.nftCollections(WALLET, { types: ['ERC-721', 'ERC-1155'] })) got.push(c.token.name!);
    expect(got).toEqual(['C1', 'C2', 'C3', 'C4', 'C5']);
    expect(server.requests.map((r) => r.url)).toEqual([
      `/api/v2/addresses/${WALLET}/nft/collections?type=ERC-721,ERC-1155`,
      `/api/v2/addresses/${WALLET}/nft/collections?type=ERC-721,ERC-1155&token_contract_address_hash=${addr(100)}&token_type=ERC-721&items_count=2`,
      `/api/v2/addresses/${WALLET}/nft/collections?type=ERC-721,ERC-1155&token_contract_address_hash=${addr(200)}&token_type=ERC-1155&items_count=4`,
    ]);
  });

  it('stops with a typed error when the server repeats the same params', async () => {
    const loop = { token_contract_address_hash: addr(100), token_type: 'ERC-721' };
    const pages = [
      { items: [item(1)], next: loop },
      { items: [item(2)], next: loop },
    ];
    const { server, client } = await start(pages);
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of client.nftCollections(WALLET)) got.push(c.token.name!);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaginationLoopError);
    expect((err as PaginationLoopError).pageParams).toEqual(loop);
    expect(got).toEqual(['C1', 'C2']);
    expect(server.requests).toHaveLength(2);
  });

  it('detects a longer cycle of params too', async () => {
    const a = { token_contract_address_hash: addr(100), token_type: 'ERC-721' };
    const b = { token_contract_address_hash: addr(200), token_type: 'ERC-721' };
    const pages = [
      { items: [item(1)], next: a },
      { items: [item(2)], next: b },
      { items: [item(3)], next: a },
    ];
    const { server, client } = await start(pages);
    const err = await (async () => {
      for await (const _ of client.nftCollections(WALLET)) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaginationLoopError);
    expect(server.requests).toHaveLength(3);
  });
});
