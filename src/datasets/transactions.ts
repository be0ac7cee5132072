import { column, type RowOf, type RowWith } from '../columns/columns.js';
import { TRANSACTION_FIELDS } from '../columns/record-fields.js';
import { BLOCK_COLUMNS, BLOCK_WINDOW_FILTERS, blockSliceAxes, blockTime, pageQuery, sameHex, type Dataset } from './dataset.js';
import type { TransactionRecord } from '../source/records.js';
import { MAX_PAGE } from '../source/query.js';
import type { TransactionDecoder } from '../decode/transaction-decoder.js';
import { TRANSACTION_DECODE_COLUMNS } from '../decode/columns.js';

/** A wallet whose transactions (as sender or receiver) are exported. */
export interface WalletTransactionsTarget {
  kind: 'wallet';
  /** Lowercase 0x address (a name in the job is resolved to this once, before planning). */
  address: string;
  /** What the job file said (address or name), for messages. */
  label: string;
  decode: boolean;
  decoder?: TransactionDecoder | undefined;
}

const TRANSACTION_COLUMNS = [
  ...BLOCK_COLUMNS,
  column('wallet_address', 'string', 'The exported wallet (the row is this wallet’s view of the transaction)', false),
  ...TRANSACTION_FIELDS,
] as const;

/** A row of the transactions table: its declared columns, then the decoder's (decode: true). */
type TransactionRow = RowWith<typeof TRANSACTION_COLUMNS>;

/** Lowercase `address` written in any case. */

/** A transaction among those of its chain and wallet. */
const transactionRowKey = (r: TransactionRecord): string => r.hash;

/** A wallet's view of a transaction: the same transaction is a row of each exported wallet it touches. */
function transactionItemId(r: TransactionRecord, target: WalletTransactionsTarget): string {
  return `${r.chain_id}:${transactionRowKey(r)}:${target.address}`;
}

export const transactionsDataset: Dataset<WalletTransactionsTarget, TransactionRecord, 'transactions', 'wallet'> = {
  name: 'transactions',
  capabilities: {
    targetKinds: ['wallet'],
    defaultFor: ['wallet'],
    extent: 'ranged',
    rangeAxes: ['block', 'time'],
    pageCap: MAX_PAGE,
    filters: 'list-route',
  },
  // The decode modules (and viem) load only when a window is built: a run with nothing to do skips them.
  async buildTarget(unit, options) {
    const { createTransactionDecoder } = options.decode ? await import('../decode/transaction-decoder.js') : {};
    return { kind: 'wallet', address: unit.wallet, label: unit.wallet, decode: options.decode, decoder: createTransactionDecoder?.({}) };
  },
  tableName: () => 'transactions',
  columns(target) {
    return target.decoder ? [...TRANSACTION_COLUMNS, ...target.decoder.columns] : [...TRANSACTION_COLUMNS];
  },
  tableOf: (_unit, options) => ({
    name: 'transactions',
    columns: options.decode ? [...TRANSACTION_COLUMNS, ...TRANSACTION_DECODE_COLUMNS] : [...TRANSACTION_COLUMNS],
  }),
  sortKey: ['chain_id', 'block_number', 'transaction_index'],
  targetKey: (target) => target.address,
  collection: {
    kind: 'paged',
    windowFilters: BLOCK_WINDOW_FILTERS,
    recount: {
      target: (unit) => {
        if (unit.kind !== 'wallet') throw new TypeError(`transactions count a wallet's transactions, not a ${unit.kind} target`);
        return { address: unit.wallet };
      },
      aggregate: async (client, target: { address: string }, q) => (await client.walletTransactions(target.address, q)).aggregations ?? [],
      // A self-transfer: one row here, in both halves of the indexer's from/to UNION ALL.
      countedTwice: {
        columns: ['from_address', 'to_address'],
        test: (row, target: { address: string }) =>
          typeof row.from_address === 'string' &&
          typeof row.to_address === 'string' &&
          sameHex(row.from_address, target.address) &&
          sameHex(row.to_address, target.address),
      },
    },
    sliceAxes: (axis) => blockSliceAxes(axis, { field: 'transaction_index', value: (r: TransactionRecord) => r.transaction_index }),
    async fetchPage(client, target, req) {
      const response = await client.walletTransactions(target.address, pageQuery(req, target.decode), req.held);
      return response.data;
    },
    foreignReason: (r, target) =>
      sameHex(r.from_address, target.address) || sameHex(r.to_address, target.address) ? null : 'other_wallet',
  },
  position: (r) => r,
  chainId: (r) => r.chain_id,
  itemId: transactionItemId,
  rowKey: transactionRowKey,
  toRow(r, target): TransactionRow {
    // One literal with every column in declared order: one allocation, one shape for all rows
    // (the NDJSON encoder then writes it with JSON.stringify). Not {...spread}: slow on Node 20.
    const row: RowOf<typeof TRANSACTION_COLUMNS> = {
      item_id: transactionItemId(r, target),
      chain_id: r.chain_id,
      block_number: r.block_number,
      block_timestamp: r.block_timestamp,
      block_time: blockTime(r.block_timestamp),
      block_hash: r.block_hash,
      wallet_address: target.address,
      hash: r.hash,
      nonce: r.nonce,
      transaction_index: r.transaction_index,
      from_address: r.from_address,
      to_address: r.to_address,
      value: r.value,
      gas_price: r.gas_price,
      gas: r.gas,
      function_selector: r.function_selector,
      data: r.data,
      max_fee_per_gas: r.max_fee_per_gas,
      max_priority_fee_per_gas: r.max_priority_fee_per_gas,
      transaction_type: r.transaction_type,
      r: r.r,
      s: r.s,
      v: r.v,
      access_list_json: r.access_list_json,
      authorization_list_json: r.authorization_list_json,
      contract_address: r.contract_address,
      gas_used: r.gas_used,
      cumulative_gas_used: r.cumulative_gas_used,
      effective_gas_price: r.effective_gas_price,
      blob_gas_used: r.blob_gas_used,
      blob_gas_price: r.blob_gas_price,
      logs_bloom: r.logs_bloom,
      status: r.status,
    };
    if (target.decoder) Object.assign(row, target.decoder.decode(r).values);
    return row;
  },
};
