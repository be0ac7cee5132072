import { describe, expect, it } from 'vitest';
import { buildSandboxData } from '@insight-export/sandbox';

const data = buildSandboxData({ seed: 42, transactions: 20_000 });
const txsByChain = new Map(data.chains.map((c) => [c.chainId, [...data.transactions(c.chainId)]]));
const txsOf = (chainId: number) => txsByChain.get(chainId)!;

describe('sandbox data set', () => {
  it('has at least three chains with different block times, in 2024, each spanning at least 3 UTC days', () => {
    expect(data.chains.length).toBeGreaterThanOrEqual(3);
    expect(new Set(data.chains.map((c) => c.blockTimeSeconds)).size).toBe(data.chains.length);
    for (const c of data.chains) {
      expect(new Date(c.firstTimestamp * 1000).getUTCFullYear()).toBe(2024);
      expect(new Date(c.headTimestamp * 1000).getUTCFullYear()).toBe(2024);
      const days = new Set(txsOf(c.chainId).map((t) => new Date(t.block_timestamp * 1000).toISOString().slice(0, 10)));
      expect(days.size).toBeGreaterThanOrEqual(3);
      expect(c.headBlock - c.firstBlock).toBe((c.headTimestamp - c.firstTimestamp) / c.blockTimeSeconds);
    }
  });

  it('links blocks by parent_hash and counts their transactions', () => {
    for (const c of data.chains) {
      const txs = txsOf(c.chainId);
      const busy = txs[Math.floor(txs.length / 2)]!.block_number;
      const block = data.block(c.chainId, busy)!;
      const parent = data.block(c.chainId, busy - 1)!;
      expect(block.parent_hash).toBe(parent.block_hash);
      expect(block.chain_id).toBe(c.chainId);
      expect(block.transaction_count).toBe(txs.filter((t) => t.block_number === busy).length);
      expect(block.block_timestamp - parent.block_timestamp).toBe(c.blockTimeSeconds);
      expect(txs.find((t) => t.block_number === busy)!.block_hash).toBe(block.block_hash);
      expect(data.block(c.chainId, c.headBlock + 1)).toBeNull();
    }
  });

  it('has all transaction types, failures, contract creations, self-transfers and blob/authorization fields', () => {
    const txs = data.chains.flatMap((c) => txsOf(c.chainId));
    expect(txs.length).toBe(20_000);
    expect(new Set(txs.map((t) => t.transaction_type))).toEqual(new Set([0, 1, 2, 3, 4]));
    expect(txs.some((t) => t.status === 0)).toBe(true);
    const creations = txs.filter((t) => t.to_address === null);
    expect(creations.length).toBeGreaterThan(0);
    for (const t of creations) expect(t.contract_address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(txs.some((t) => t.from_address === t.to_address)).toBe(true);
    for (const t of txs.filter((t) => t.transaction_type === 3)) {
      expect(t.blob_gas_used).toBeGreaterThan(0);
      expect(t.blob_gas_price).toMatch(/^\d+$/);
    }
    for (const t of txs.filter((t) => t.transaction_type === 4)) expect(JSON.parse(t.authorization_list_json!)).toHaveLength(1);
    for (const t of txs.filter((t) => t.transaction_type < 2)) expect(t.max_fee_per_gas).toBeNull();
    // uint256 values beyond 2^64 exist, so comparing them as doubles would be wrong
    expect(txs.some((t) => BigInt(t.value) > 2n ** 64n)).toBe(true);
  });

  it('lets one wallet window exceed the page cap (20 pages x 1000 rows) in a 200k set', () => {
    const big = buildSandboxData({ seed: 42, transactions: 200_000 });
    const alice = big.wallets[0]!;
    expect(alice.transactionsByChain[1]).toBeGreaterThan(21 * 1000);
    const q = big.parseTransactionsQuery('chain_id=1&sort_by=block_number&limit=1000&page=20');
    expect(big.walletTransactions(alice.address, q).data).toHaveLength(1000);
    expect(() => big.parseTransactionsQuery('chain_id=1&limit=1000&page=21')).toThrow(/page/);
  });

  it('has a hot wallet, named wallets and hashes that find their rows', () => {
    const total = data.transactionTotal;
    expect(data.wallets[0]!.transactionCount / total).toBeGreaterThan(0.25);
    expect(data.wallet('alice.eth')).toBe(data.wallets[0]);
    expect(data.wallets.filter((w) => w.name).length).toBeGreaterThanOrEqual(3);
    for (const c of data.chains) {
      const txs = txsOf(c.chainId);
      const sample = txs[txs.length - 3]!;
      expect(data.transaction(c.chainId, sample.hash)).toEqual(sample);
      expect(new Set(txs.map((t) => t.hash)).size).toBe(txs.length);
    }
  });

  it('has contracts of every kind and logs numbered within their block', () => {
    expect(new Set(data.contracts.map((c) => c.kind))).toEqual(new Set(['erc20', 'erc721', 'erc1155', 'unknown']));
    for (const c of data.chains) {
      const logs = [...data.logs(c.chainId)];
      expect(logs.length).toBe(c.logCount);
      const byBlock = new Map<number, number[]>();
      for (const l of logs) byBlock.set(l.block_number, [...(byBlock.get(l.block_number) ?? []), l.log_index]);
      for (const idx of byBlock.values()) expect(idx).toEqual(idx.map((_, i) => i));
    }
  });
});
