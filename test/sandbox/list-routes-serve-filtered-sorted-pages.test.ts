import { describe, expect, it } from 'vitest';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 6_000, seed: 7 });

describe('wallet transactions route', () => {
  it('returns every transaction where the wallet is from or to, per chain, sorted by block then index', async () => {
    const alice = sandbox.data.wallets[0]!;
    const chainId = 8453;
    const rows: any[] = [];
    for (let page = 0; ; page++) {
      const { status, body } = await getJson(
        `${sandbox.url}/wallets/${alice.address}/transactions?chain_id=${chainId}&sort_by=block_number&sort_order=asc&limit=200&page=${page}`,
      );
      expect(status).toBe(200);
      rows.push(...body.data);
      if (body.data.length < 200) break;
    }
    expect(rows.length).toBe(alice.transactionsByChain[chainId]);
    const truth = [...sandbox.data.transactions(chainId)].filter((t) => t.from_address === alice.address || t.to_address === alice.address);
    expect(rows.map((r) => r.hash)).toEqual(truth.map((t) => t.hash));
    for (const r of rows) expect(r.chain_id).toBe(String(chainId));
  });

  it('accepts a name for the wallet and echoes the address in meta', async () => {
    const alice = sandbox.data.wallets[0]!;
    const { status, body } = await getJson(`${sandbox.url}/wallets/alice.eth/transactions?chain_id=1&limit=5`);
    expect(status).toBe(200);
    expect(body.meta.address).toBe(alice.address);
    expect(body.data).toHaveLength(5);
  });
});

describe('events route', () => {
  it('filters a contract by the topic0 of the signature and echoes topic0', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
    const sig = 'Approval(address indexed owner, address indexed spender, uint256 value)';
    const { status, body } = await getJson(
      `${sandbox.url}/events/${token.address}/${encodeURIComponent(sig)}?chain_id=1&limit=1000&sort_by=block_number`,
    );
    expect(status).toBe(200);
    const truth = [...sandbox.data.logs(1)].filter((l) => l.address === token.address && l.topics[0] === body.meta.signature);
    expect(truth.length).toBeGreaterThan(0);
    expect(body.data.map((e: any) => [e.transaction_hash, e.log_index])).toEqual(truth.map((t) => [t.transaction_hash, t.log_index]));
  });
});
