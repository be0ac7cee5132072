/**
 * What the node itself says, read with viem's public client (its own formatting, not the
 * sandbox's converter), turned into the rows an export must read back as (test/helpers/export.ts
 * canonical form: integers as decimal strings, timestamps as epoch microseconds).
 */
import { createPublicClient, http, type Block, type Log, type PublicClient, type Transaction, type TransactionReceipt } from 'viem';
import type { CanonRow } from '../../helpers/export.js';

export type FullBlock = Block<bigint, true, 'latest'>;

const TYPE_NUMBER: Record<string, number> = { legacy: 0, eip2930: 1, eip1559: 2, eip4844: 3, eip7702: 4 };

export class NodeTruth {
  readonly client: PublicClient;
  readonly blocks = new Map<number, FullBlock>();
  readonly receipts = new Map<string, TransactionReceipt>();

  constructor(url: string) {
    this.client = createPublicClient({ transport: http(url, { batch: { batchSize: 100 } }) });
  }

  /** Every block 0..head with full transactions, and a receipt per transaction (eth_getTransactionReceipt). */
  async load(): Promise<number> {
    const head = Number(await this.client.getBlockNumber());
    this.blocks.clear();
    this.receipts.clear();
    const blocks = await Promise.all(
      Array.from({ length: head + 1 }, (_, n) => this.client.getBlock({ blockNumber: BigInt(n), includeTransactions: true })),
    );
    blocks.forEach((b) => this.blocks.set(Number(b.number), b));
    const txs = blocks.flatMap((b) => b.transactions);
    const receipts = await Promise.all(txs.map((t) => this.client.getTransactionReceipt({ hash: t.hash })));
    receipts.forEach((r) => this.receipts.set(r.transactionHash.toLowerCase(), r));
    return head;
  }

  transactions(): Transaction[] {
    return [...this.blocks.values()].flatMap((b) => b.transactions);
  }

  /** The node's transactions sent or received by a wallet. */
  walletTransactions(wallet: string): Transaction[] {
    const w = wallet.toLowerCase();
    return this.transactions().filter((t) => t.from.toLowerCase() === w || t.to?.toLowerCase() === w);
  }

  block(n: number | bigint): FullBlock {
    const b = this.blocks.get(Number(n));
    if (!b) throw new Error(`block ${n} not loaded`);
    return b;
  }
}

const s = (v: bigint | number | null | undefined): string | null => (v === null || v === undefined ? null : v.toString());

/** The read interface's block record (resolve) for a node block. */
export function expectedBlockRecord(b: FullBlock, chainId: number): Record<string, unknown> {
  return {
    chain_id: chainId,
    block_number: Number(b.number),
    block_hash: b.hash,
    parent_hash: b.parentHash,
    block_timestamp: Number(b.timestamp),
    nonce: b.nonce,
    sha3_uncles: b.sha3Uncles,
    mix_hash: b.mixHash,
    miner: b.miner.toLowerCase(),
    state_root: b.stateRoot,
    transactions_root: b.transactionsRoot,
    receipts_root: b.receiptsRoot,
    logs_bloom: b.logsBloom,
    size: Number(b.size),
    extra_data: b.extraData,
    difficulty: s(b.difficulty),
    total_difficulty: s(b.totalDifficulty),
    transaction_count: b.transactions.length,
    gas_limit: Number(b.gasLimit),
    gas_used: Number(b.gasUsed),
    withdrawals_root: b.withdrawalsRoot ?? null,
    base_fee_per_gas: b.baseFeePerGas === null || b.baseFeePerGas === undefined ? null : Number(b.baseFeePerGas),
  };
}

/** The exported transactions row (columns without the decode ones) of a node transaction for a wallet. */
export function expectedTransactionRow(t: Transaction, r: TransactionReceipt, b: FullBlock, wallet: string, chainId: number): CanonRow {
  const to = t.to?.toLowerCase() ?? null;
  const auth = (t as { authorizationList?: { chainId: number; address: string; nonce: number; yParity?: number; r: string; s: string }[] })
    .authorizationList;
  return {
    item_id: `${chainId}:${t.hash}:${wallet.toLowerCase()}`,
    chain_id: String(chainId),
    block_number: s(t.blockNumber),
    block_timestamp: s(b.timestamp),
    block_time: String(b.timestamp * 1_000_000n),
    block_hash: t.blockHash,
    wallet_address: wallet.toLowerCase(),
    hash: t.hash,
    nonce: s(t.nonce),
    transaction_index: s(t.transactionIndex),
    from_address: t.from.toLowerCase(),
    to_address: to,
    value: s(t.value),
    gas_price: s(t.gasPrice),
    gas: s(t.gas),
    function_selector: to !== null && t.input.length >= 10 ? t.input.slice(0, 10) : null,
    data: t.input,
    max_fee_per_gas: s(t.maxFeePerGas),
    max_priority_fee_per_gas: s(t.maxPriorityFeePerGas),
    transaction_type: String(TYPE_NUMBER[t.type]),
    r: BigInt(t.r).toString(),
    s: BigInt(t.s).toString(),
    v: s(t.v ?? (t.yParity === undefined ? null : BigInt(t.yParity))),
    access_list_json: t.accessList
      ? JSON.stringify(t.accessList.map((e) => ({ address: e.address.toLowerCase(), storageKeys: e.storageKeys })))
      : null,
    authorization_list_json: auth
      ? JSON.stringify(
          auth.map((a) => ({
            chainId: String(a.chainId),
            address: a.address.toLowerCase(),
            nonce: String(a.nonce),
            yParity: String(a.yParity ?? 0),
            r: a.r,
            s: a.s,
          })),
        )
      : null,
    contract_address: r.contractAddress?.toLowerCase() ?? null,
    gas_used: s(r.gasUsed),
    cumulative_gas_used: s(r.cumulativeGasUsed),
    effective_gas_price: s(r.effectiveGasPrice),
    blob_gas_used: s(r.blobGasUsed),
    blob_gas_price: s(r.blobGasPrice),
    logs_bloom: r.logsBloom,
    status: r.status === 'success' ? '1' : '0',
  };
}

/** The exported event row of a node log (columns without the decoded ones). */
export function expectedEventRow(l: Log, b: FullBlock, chainId: number, canonical: string): CanonRow {
  return {
    item_id: `${chainId}:${l.transactionHash}:${l.logIndex}`,
    chain_id: String(chainId),
    block_number: s(l.blockNumber),
    block_timestamp: s(b.timestamp),
    block_time: String(b.timestamp * 1_000_000n),
    block_hash: l.blockHash,
    transaction_hash: l.transactionHash,
    transaction_index: s(l.transactionIndex),
    log_index: s(l.logIndex),
    address: l.address.toLowerCase(),
    topic0: l.topics[0] ?? null,
    topic1: l.topics[1] ?? null,
    topic2: l.topics[2] ?? null,
    topic3: l.topics[3] ?? null,
    data: l.data,
    event_signature: canonical,
  };
}
