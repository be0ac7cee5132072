/** The record columns the queries read of a chain (filters, group_by, aggregates), by the service's field names. */
import type { ColumnCatalog, ColumnSpec } from './query.js';
import type { Column, ColumnType } from '../../../src/shared-with-sandbox.js';
import type { BLOCK_FIELDS, EVENT_QUERY_FIELDS, TRANSACTION_QUERY_FIELDS } from '../../../src/shared-with-sandbox.js';
import type { ChainState } from './chain-state.js';

export type TxCol = ColumnCatalog<ChainState>;

/** How the sandbox compares a field of each column type. */
export type KindOf<T extends ColumnType> = T extends 'int32' | 'int64' ? 'num' : T extends 'uint256' ? 'big' : 'str';

/** Query columns named as the service's fields (src/columns/record-fields.ts) and compared as their type says. */
export type FieldCatalog<Fields extends readonly Column[]> = {
  [F in Fields[number] as F['name']]?: ColumnSpec<ChainState> & { kind: KindOf<F['type']> };
};

export const big = (v: bigint | null) => v;

/** Columns of the block fields of transactions and events. */
export const BLOCK_FIELD_COLUMNS = {
  chain_id: { kind: 'num', wire: 'string', get: (c) => c.chainId },
  block_number: { kind: 'num', wire: 'number', monotonic: true, get: (c, r) => c.blockNumber(r) },
  block_hash: { kind: 'str', wire: 'string', get: (c, r) => c.blockHashOf(c.blockOff[r]!) },
  block_timestamp: { kind: 'num', wire: 'number', monotonic: true, get: (c, r) => c.blockTimestamp(r) },
} satisfies FieldCatalog<typeof BLOCK_FIELDS>;

/** Columns of wallet transactions: filters, group_by and aggregate names. */
export const TRANSACTION_COLUMNS: TxCol = {
  ...BLOCK_FIELD_COLUMNS,
  hash: { kind: 'str', wire: 'string', get: (c, r) => c.txHash(r) },
  nonce: { kind: 'num', wire: 'number', get: (c, r) => c.nonce[r]! },
  transaction_index: { kind: 'num', wire: 'number', get: (c, r) => c.txIndex[r]! },
  from_address: { kind: 'str', wire: 'string', get: (c, r) => c.fromAddress(r) },
  to_address: { kind: 'str', wire: 'string', get: (c, r) => c.toAddress(r) },
  value: { kind: 'big', wire: 'string', get: (c, r) => c.value(r) },
  gas_price: { kind: 'big', wire: 'string', get: (c, r) => c.gasPrice(r) },
  gas: { kind: 'num', wire: 'number', get: (c, r) => c.gas(r) },
  function_selector: { kind: 'str', wire: 'string', get: (c, r) => c.functionSelector(r) },
  max_fee_per_gas: { kind: 'big', wire: 'string', get: (c, r) => big(c.maxFeePerGas(r)) },
  max_priority_fee_per_gas: { kind: 'big', wire: 'string', get: (c, r) => big(c.maxPriorityFeePerGas(r)) },
  transaction_type: { kind: 'num', wire: 'number', get: (c, r) => c.type[r]! },
  contract_address: { kind: 'str', wire: 'string', get: (c, r) => c.contractAddress(r) },
  gas_used: { kind: 'num', wire: 'number', get: (c, r) => c.gasUsed(r) },
  cumulative_gas_used: { kind: 'num', wire: 'number', get: (c, r) => c.cumulativeGasUsed(r) },
  effective_gas_price: { kind: 'big', wire: 'string', get: (c, r) => c.gasPrice(r) },
  blob_gas_used: { kind: 'num', wire: 'number', get: (c, r) => c.blobGasUsed(r) },
  blob_gas_price: { kind: 'big', wire: 'string', get: (c, r) => c.blobGasPrice(r) },
  status: { kind: 'num', wire: 'number', get: (c, r) => c.status[r]! },
} satisfies FieldCatalog<typeof TRANSACTION_QUERY_FIELDS>;

/** Columns of contract events (`topic_N` are the filter_topic_N columns). */
export const EVENT_COLUMNS: TxCol = {
  ...BLOCK_FIELD_COLUMNS,
  transaction_hash: { kind: 'str', wire: 'string', get: (c, r) => c.txHash(r) },
  transaction_index: { kind: 'num', wire: 'number', get: (c, r) => c.txIndex[r]! },
  log_index: { kind: 'num', wire: 'number', get: (c, r) => c.logIndex[r]! },
  address: { kind: 'str', wire: 'string', get: (c, r) => c.toAddress(r) },
  data: { kind: 'str', wire: 'string', get: (c, r) => c.logData(r) },
  topic_0: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 0) },
  topic_1: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 1) },
  topic_2: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 2) },
  topic_3: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 3) },
} satisfies FieldCatalog<typeof EVENT_QUERY_FIELDS>;
