import type { BlockRecord, EventRecord, TransactionRecord } from '../../../../src/shared-with-sandbox.js';
import { InsightExportError } from '../../../../src/shared-with-sandbox.js';
import { RpcNodeError } from './errors.js';

/**
 * JSON-RPC shapes (execution-apis) as the node sends them, and their conversion into the read
 * interface's normalised records. Quantities arrive as 0x hex: counts, indexes and gas become
 * numbers, wei amounts and signature words exact decimal strings; hashes and addresses lowercase.
 * A field the node leaves out becomes null ("blob fields where present").
 */

export type HexString = `0x${string}`;

export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
  transactionHash: string;
  transactionIndex: string;
  blockHash: string;
  blockNumber: string;
  removed?: boolean;
}

export interface RpcAuthorization {
  chainId: string;
  address: string;
  nonce: string;
  yParity?: string;
  v?: string;
  r: string;
  s: string;
}

export interface RpcTransaction {
  hash: string;
  nonce: string;
  blockHash: string | null;
  blockNumber: string | null;
  transactionIndex: string | null;
  from: string;
  to: string | null;
  value: string;
  gas: string;
  gasPrice?: string | null;
  input: string;
  type?: string;
  maxFeePerGas?: string | null;
  maxPriorityFeePerGas?: string | null;
  r?: string | null;
  s?: string | null;
  v?: string | null;
  yParity?: string | null;
  accessList?: { address: string; storageKeys: string[] }[] | null;
  authorizationList?: RpcAuthorization[] | null;
}

export interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  nonce?: string | null;
  sha3Uncles?: string | null;
  mixHash?: string | null;
  miner?: string | null;
  stateRoot?: string | null;
  transactionsRoot?: string | null;
  receiptsRoot?: string | null;
  logsBloom?: string | null;
  size?: string | null;
  extraData?: string | null;
  difficulty?: string | null;
  totalDifficulty?: string | null;
  gasLimit?: string | null;
  gasUsed?: string | null;
  withdrawalsRoot?: string | null;
  baseFeePerGas?: string | null;
  /** Full transaction objects (eth_getBlockByNumber with `true`) or hashes (`false`). */
  transactions: (RpcTransaction | string)[];
}

export interface RpcReceipt {
  transactionHash: string;
  transactionIndex: string;
  blockHash: string;
  blockNumber: string;
  status?: string | null;
  gasUsed: string;
  cumulativeGasUsed: string;
  effectiveGasPrice?: string | null;
  contractAddress?: string | null;
  logsBloom: string;
  blobGasUsed?: string | null;
  blobGasPrice?: string | null;
  logs: RpcLog[];
}

/** A block with everything the sandbox stores about it, as the node gave it. */
export interface LoadedBlock {
  block: BlockRecord;
  transactions: TransactionRecord[];
  /** Every log of the block, in log_index order. */
  logs: EventRecord[];
}

function quantity(hex: string | null | undefined, field: string): bigint {
  if (typeof hex !== 'string' || !/^0x[0-9a-fA-F]+$/.test(hex)) {
    throw new RpcNodeError(`The node sent an invalid quantity in ${field}`, { details: `${field} = ${JSON.stringify(hex)}` });
  }
  return BigInt(hex);
}

/** A quantity that fits a JS number exactly (block numbers, indexes, gas). */
export function num(hex: string, field: string): number {
  const v = quantity(hex, field);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RpcNodeError(`The node sent ${field} beyond 2^53`, { details: `${field} = ${hex}` });
  }
  return Number(v);
}

function numOrNull(hex: string | null | undefined, field: string): number | null {
  return hex === null || hex === undefined ? null : num(hex, field);
}

/** A wei amount or signature word as an exact decimal string. */
function dec(hex: string, field: string): string {
  return quantity(hex, field).toString();
}

function decOrNull(hex: string | null | undefined, field: string): string | null {
  return hex === null || hex === undefined ? null : dec(hex, field);
}

function lower(v: string): string;
function lower(v: string | null | undefined): string | null;
function lower(v: string | null | undefined): string | null {
  return v === null || v === undefined ? null : v.toLowerCase();
}

export function blockRecord(chainId: number, b: RpcBlock): BlockRecord {
  return {
    chain_id: chainId,
    block_number: num(b.number, 'block.number'),
    block_hash: lower(b.hash),
    parent_hash: lower(b.parentHash),
    block_timestamp: num(b.timestamp, 'block.timestamp'),
    nonce: lower(b.nonce),
    sha3_uncles: lower(b.sha3Uncles),
    mix_hash: lower(b.mixHash),
    miner: lower(b.miner),
    state_root: lower(b.stateRoot),
    transactions_root: lower(b.transactionsRoot),
    receipts_root: lower(b.receiptsRoot),
    logs_bloom: lower(b.logsBloom),
    size: numOrNull(b.size, 'block.size'),
    extra_data: lower(b.extraData),
    difficulty: decOrNull(b.difficulty, 'block.difficulty'),
    total_difficulty: decOrNull(b.totalDifficulty, 'block.totalDifficulty'),
    transaction_count: b.transactions.length,
    gas_limit: numOrNull(b.gasLimit, 'block.gasLimit'),
    gas_used: numOrNull(b.gasUsed, 'block.gasUsed'),
    withdrawals_root: lower(b.withdrawalsRoot),
    base_fee_per_gas: numOrNull(b.baseFeePerGas, 'block.baseFeePerGas'),
  };
}

/** First 4 bytes of the calldata of a call; null for creations and for calls with less than 4 bytes. */
export function functionSelector(to: string | null, input: string): string | null {
  return to !== null && input.length >= 10 ? input.slice(0, 10).toLowerCase() : null;
}

function authorizationJson(list: RpcAuthorization[]): string {
  return JSON.stringify(
    list.map((a, i) => ({
      chainId: dec(a.chainId, `authorizationList[${i}].chainId`),
      address: a.address.toLowerCase(),
      nonce: dec(a.nonce, `authorizationList[${i}].nonce`),
      yParity: dec(a.yParity ?? a.v ?? '0x0', `authorizationList[${i}].yParity`),
      r: a.r.toLowerCase(),
      s: a.s.toLowerCase(),
    })),
  );
}

export function transactionRecord(block: BlockRecord, tx: RpcTransaction, receipt: RpcReceipt): TransactionRecord {
  const where = `transaction ${tx.hash}`;
  const to = lower(tx.to);
  const data = lower(tx.input);
  return {
    chain_id: block.chain_id,
    block_number: block.block_number,
    block_hash: block.block_hash,
    block_timestamp: block.block_timestamp,
    hash: lower(tx.hash),
    nonce: num(tx.nonce, `${where} nonce`),
    transaction_index: num(tx.transactionIndex ?? receipt.transactionIndex, `${where} transactionIndex`),
    from_address: lower(tx.from),
    to_address: to,
    value: dec(tx.value, `${where} value`),
    gas_price: decOrNull(tx.gasPrice ?? receipt.effectiveGasPrice, `${where} gasPrice`),
    gas: num(tx.gas, `${where} gas`),
    function_selector: functionSelector(to, data),
    data,
    max_fee_per_gas: decOrNull(tx.maxFeePerGas, `${where} maxFeePerGas`),
    max_priority_fee_per_gas: decOrNull(tx.maxPriorityFeePerGas, `${where} maxPriorityFeePerGas`),
    transaction_type: num(tx.type ?? '0x0', `${where} type`),
    r: decOrNull(tx.r, `${where} r`),
    s: decOrNull(tx.s, `${where} s`),
    v: decOrNull(tx.v ?? tx.yParity, `${where} v`),
    access_list_json: tx.accessList
      ? JSON.stringify(
          tx.accessList.map((e) => ({ address: e.address.toLowerCase(), storageKeys: e.storageKeys.map((k) => k.toLowerCase()) })),
        )
      : null,
    authorization_list_json: tx.authorizationList ? authorizationJson(tx.authorizationList) : null,
    contract_address: lower(receipt.contractAddress),
    gas_used: num(receipt.gasUsed, `${where} receipt gasUsed`),
    cumulative_gas_used: num(receipt.cumulativeGasUsed, `${where} receipt cumulativeGasUsed`),
    effective_gas_price: decOrNull(receipt.effectiveGasPrice, `${where} receipt effectiveGasPrice`),
    blob_gas_used: numOrNull(receipt.blobGasUsed, `${where} receipt blobGasUsed`),
    blob_gas_price: decOrNull(receipt.blobGasPrice, `${where} receipt blobGasPrice`),
    logs_bloom: lower(receipt.logsBloom),
    status: numOrNull(receipt.status, `${where} receipt status`),
  };
}

export function eventRecord(block: BlockRecord, log: RpcLog): EventRecord {
  const where = `log ${log.transactionHash}/${log.logIndex}`;
  return {
    chain_id: block.chain_id,
    block_number: block.block_number,
    block_hash: block.block_hash,
    block_timestamp: block.block_timestamp,
    transaction_hash: lower(log.transactionHash),
    transaction_index: num(log.transactionIndex, `${where} transactionIndex`),
    log_index: num(log.logIndex, `${where} logIndex`),
    address: lower(log.address),
    data: lower(log.data),
    topics: log.topics.map((t) => t.toLowerCase()),
  };
}

/**
 * The records of one block from the node's block (with full transactions) and its receipts.
 * Receipts must belong to this block (same hash): a mismatch means the node reorganised between
 * the two calls, and the caller retries.
 */
export function loadedBlock(chainId: number, raw: RpcBlock, receipts: RpcReceipt[]): LoadedBlock {
  const block = blockRecord(chainId, raw);
  const byHash = new Map(receipts.map((r) => [r.transactionHash.toLowerCase(), r]));
  const transactions: TransactionRecord[] = [];
  const logs: EventRecord[] = [];
  for (const tx of raw.transactions) {
    if (typeof tx === 'string')
      throw new RpcNodeError('The node sent transaction hashes where full transactions were asked for', { details: `block ${raw.number}` });
    const receipt = byHash.get(tx.hash.toLowerCase());
    if (!receipt) throw new ReorgDuringLoad(block.block_number, `no receipt for ${tx.hash}`);
    if (receipt.blockHash.toLowerCase() !== block.block_hash)
      throw new ReorgDuringLoad(block.block_number, `receipt of ${tx.hash} is in block ${receipt.blockHash}`);
    transactions.push(transactionRecord(block, tx, receipt));
    for (const log of receipt.logs) logs.push(eventRecord(block, log));
  }
  transactions.sort((a, b) => a.transaction_index - b.transaction_index);
  logs.sort((a, b) => a.log_index - b.log_index);
  return { block, transactions, logs };
}

/**
 * The node's chain changed under the loader (a block's receipts belong to another block, the next
 * block's parent is not the stored head, a block vanished): the follower repeats its step.
 */
export class ReorgDuringLoad extends InsightExportError {
  override name = 'ReorgDuringLoad';
  constructor(
    readonly blockNumber: number,
    reason: string,
  ) {
    super(`Block ${blockNumber} changed while it was loaded (${reason})`, {
      hint: 'The node kept reorganising; the sandbox retries at the next poll.',
    });
  }
}
