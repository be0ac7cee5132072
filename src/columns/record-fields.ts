/**
 * The fields of the read interface's transaction, event and block records, each with one name and
 * one column type. The record types (src/source/records.ts), the datasets' columns, the fields
 * aggregates' expressions may name and the sandbox's query columns take theirs from here.
 * A field's `nullable` is its column's; see alwaysInRecord for the fields whose record never holds null.
 */
import { column, type Column, type ColumnValue } from './columns.js';

declare const heldByEveryRecord: unique symbol;

/** A field the normalised record always holds a value of, though its column is declared nullable. */
type AlwaysInRecord<C extends Column> = C & { readonly [heldByEveryRecord]: true };

/** Marks a field as AlwaysInRecord (for the type checker only: the column is unchanged). */
function alwaysInRecord<C extends Column>(c: C): AlwaysInRecord<C> {
  return c as AlwaysInRecord<C>;
}

/** The record of a field list: one key per field, null only where the record may lack the value. */
export type RecordOf<Fields extends readonly Column[]> = {
  [F in Fields[number] as F['name']]:
    ColumnValue[F['type']] | (F extends { readonly [heldByEveryRecord]: true } ? never : F['nullable'] extends false ? never : null);
};

/** Where a transaction or a log sits: the fields every transaction and event record starts with. */
export const BLOCK_FIELDS = [
  column('chain_id', 'int64', 'Chain id', false),
  column('block_number', 'int64', 'Block number', false),
  column('block_hash', 'string', 'Block hash, lowercase 0x hex', false),
  column('block_timestamp', 'int64', 'Block time, unix seconds', false),
] as const;

/** A transaction's own fields, after BLOCK_FIELDS. */
export const TRANSACTION_FIELDS = [
  column('hash', 'string', 'Transaction hash', false),
  alwaysInRecord(column('nonce', 'int64', 'Sender nonce')),
  column('transaction_index', 'int64', 'Position in the block', false),
  alwaysInRecord(column('from_address', 'string', 'Sender')),
  column('to_address', 'string', 'Receiver; null for contract creation'),
  alwaysInRecord(column('value', 'uint256', 'Value in wei, exact decimal')),
  column('gas_price', 'uint256', 'Gas price in wei'),
  alwaysInRecord(column('gas', 'int64', 'Gas limit')),
  column('function_selector', 'string', 'First 4 bytes of the input'),
  alwaysInRecord(column('data', 'string', 'Input data, hex')),
  column('max_fee_per_gas', 'uint256', 'EIP-1559 max fee per gas'),
  column('max_priority_fee_per_gas', 'uint256', 'EIP-1559 max priority fee per gas'),
  alwaysInRecord(column('transaction_type', 'int32', 'Transaction type (0 legacy, 1 access list, 2 EIP-1559, 3 blob, 4 set-code)')),
  column('r', 'uint256', 'Signature r'),
  column('s', 'uint256', 'Signature s'),
  column('v', 'uint256', 'Signature v'),
  column('access_list_json', 'json', 'Access list, JSON'),
  column('authorization_list_json', 'json', 'EIP-7702 authorization list, JSON'),
  column('contract_address', 'string', 'Created contract, for contract creations'),
  column('gas_used', 'int64', 'Gas used by this transaction'),
  column('cumulative_gas_used', 'int64', 'Gas used in the block up to and including this transaction'),
  column('effective_gas_price', 'uint256', 'Price actually paid per gas'),
  column('blob_gas_used', 'int64', 'Blob gas used'),
  column('blob_gas_price', 'uint256', 'Blob gas price'),
  column('logs_bloom', 'string', 'Logs bloom filter'),
  column('status', 'int32', '1 success, 0 failure'),
] as const;

/** A log's own fields, after BLOCK_FIELDS; its topics are the record's `topics` array. */
export const EVENT_FIELDS = [
  column('transaction_hash', 'string', 'Transaction that emitted the log', false),
  column('transaction_index', 'int64', 'Position of the transaction in the block', false),
  column('log_index', 'int64', 'Position of the log in the block', false),
  column('address', 'string', 'Contract that emitted the log', false),
  alwaysInRecord(column('data', 'string', 'Non-indexed parameters, ABI-encoded hex')),
] as const;

/** A block header's own fields, after BLOCK_FIELDS (in the order the blocks dataset writes them). */
export const BLOCK_HEADER_FIELDS = [
  column('parent_hash', 'string', 'Hash of the parent block', false),
  column('miner', 'string', 'Fee recipient (coinbase)'),
  column('gas_limit', 'int64', 'Gas limit of the block'),
  column('gas_used', 'int64', 'Gas used by the block'),
  column('base_fee_per_gas', 'int64', 'EIP-1559 base fee per gas, wei'),
  column('transaction_count', 'int64', 'Transactions in the block'),
  column('size', 'int64', 'Block size, bytes'),
  column('nonce', 'string', 'Block nonce, hex'),
  column('difficulty', 'uint256', 'Difficulty'),
  column('total_difficulty', 'uint256', 'Total difficulty of the chain up to this block'),
  column('sha3_uncles', 'string', 'Hash of the uncles list'),
  column('mix_hash', 'string', 'Mix hash'),
  column('state_root', 'string', 'State trie root'),
  column('transactions_root', 'string', 'Transactions trie root'),
  column('receipts_root', 'string', 'Receipts trie root'),
  column('withdrawals_root', 'string', 'Withdrawals trie root'),
  column('logs_bloom', 'string', 'Logs bloom filter'),
  column('extra_data', 'string', 'Extra data, hex'),
] as const;

/** What the service's queries (filters, group_by, aggregate) call the entries of a log's `topics`. */
const EVENT_TOPIC_FIELDS = [
  column('topic_0', 'string', 'topics[0]: the event signature hash'),
  column('topic_1', 'string', 'topics[1]'),
  column('topic_2', 'string', 'topics[2]'),
  column('topic_3', 'string', 'topics[3]'),
] as const;

type NotJson<C extends Column> = Exclude<C, { type: 'json' }>;

/** The fields of wallet transactions that group_by and aggregate expressions may name: all but the JSON text. */
export const TRANSACTION_QUERY_FIELDS = [...BLOCK_FIELDS, ...TRANSACTION_FIELDS].filter(
  (f): f is NotJson<(typeof TRANSACTION_FIELDS)[number] | (typeof BLOCK_FIELDS)[number]> => f.type !== 'json',
);

/** The fields of contract events that group_by and aggregate expressions may name. */
export const EVENT_QUERY_FIELDS = [...BLOCK_FIELDS, ...EVENT_FIELDS, ...EVENT_TOPIC_FIELDS] as const;

/** The name of a field of a field list. */
export type FieldName<Fields extends readonly Column[]> = Fields[number]['name'];
