import { describe, expect, it } from 'vitest';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 6_000, seed: 21 });

function walletRows(chainId: number, address: string) {
  return [...sandbox.data.transactions(chainId)].filter((t) => t.from_address === address || t.to_address === address);
}

describe('limit and page', () => {
  it('page p returns rows [p*limit, (p+1)*limit) of EACH requested chain, in request order', async () => {
    const alice = sandbox.data.wallets[0]!;
    const limit = 7;
    const page = 3;
    const { status, body } = await getJson(
      `${sandbox.url}/wallets/${alice.address}/transactions?chain_id=42161&chain_id=1&sort_by=block_number&sort_order=desc&limit=${limit}&page=${page}`,
    );
    expect(status).toBe(200);
    const expected = [42161, 1].flatMap((c) =>
      walletRows(c, alice.address)
        .reverse()
        .slice(page * limit, (page + 1) * limit),
    );
    expect(body.data.map((r: any) => `${r.chain_id}:${r.hash}`)).toEqual(expected.map((t) => `${t.chain_id}:${t.hash}`));
    expect(body.meta).toEqual({
      chain_ids: [42161, 1],
      page,
      limit_per_chain: limit,
      total_items: 2 * limit,
      total_pages: 0,
      address: alice.address,
    });
  });

  it('without chain_id queries every chain, limit 20 by default', async () => {
    const bob = sandbox.data.wallets[1]!;
    const { body } = await getJson(`${sandbox.url}/wallets/${bob.address}/transactions?sort_by=block_number`);
    expect(body.meta.chain_ids).toEqual(sandbox.data.chains.map((c) => c.chainId));
    expect(body.meta.limit_per_chain).toBe(20);
    const expected = sandbox.data.chains.flatMap((c) => walletRows(c.chainId, bob.address).slice(0, 20));
    expect(body.data.map((r: any) => r.hash)).toEqual(expected.map((t) => t.hash));
  });

  it('breaks block ties by transaction_index in the sort direction', async () => {
    const alice = sandbox.data.wallets[0]!;
    for (const order of ['asc', 'desc']) {
      const { body } = await getJson(
        `${sandbox.url}/wallets/${alice.address}/transactions?chain_id=1&sort_by=block_number&sort_order=${order}&limit=1000`,
      );
      const keys = body.data.map((r: any) => r.block_number * 10_000 + r.transaction_index);
      const sorted = [...keys].sort((a, b) => (order === 'asc' ? a - b : b - a));
      expect(keys).toEqual(sorted);
      // ties exist, so the tie-break is exercised
      expect(new Set(body.data.map((r: any) => r.block_number)).size).toBeLessThan(keys.length);
    }
  });

  it('a short page ends the chain: the last page holds the remainder', async () => {
    const bob = sandbox.data.wallets[1]!;
    const total = bob.transactionsByChain[8453]!;
    const limit = 50;
    const last = Math.floor(total / limit);
    const { body } = await getJson(
      `${sandbox.url}/wallets/${bob.address}/transactions?chain_id=8453&limit=${limit}&page=${last}&sort_by=block_number`,
    );
    expect(body.data).toHaveLength(total - last * limit);
  });

  it('page 20 is served, page 21 is a 400 with an error body', async () => {
    const alice = sandbox.data.wallets[0]!;
    const ok = await getJson(`${sandbox.url}/wallets/${alice.address}/transactions?chain_id=1&limit=10&page=20&sort_by=block_number`);
    expect(ok.status).toBe(200);
    expect(ok.body.data.map((r: any) => r.hash)).toEqual(
      walletRows(1, alice.address)
        .slice(200, 210)
        .map((t) => t.hash),
    );
    const past = await getJson(`${sandbox.url}/wallets/${alice.address}/transactions?chain_id=1&limit=10&page=21`);
    expect(past.status).toBe(400);
    expect(Object.keys(past.body)).toEqual(['error']);
    expect(past.body.error).toMatch(/page/);
  });
});
