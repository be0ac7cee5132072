/**
 * The field tables of the read-interface contract, transcribed by hand (the reference
 * folder is not part of the checkout). Normalised records must carry exactly these keys.
 */
export const TRANSACTION_FIELDS = [
  'chain_id',
  'block_number',
  'block_hash',
  'block_timestamp',
  'hash',
  'nonce',
  'transaction_index',
  'from_address',
  'to_address',
  'value',
  'gas_price',
  'gas',
  'function_selector',
  'data',
  'max_fee_per_gas',
  'max_priority_fee_per_gas',
  'transaction_type',
  'r',
  's',
  'v',
  'access_list_json',
  'authorization_list_json',
  'contract_address',
  'gas_used',
  'cumulative_gas_used',
  'effective_gas_price',
  'blob_gas_used',
  'blob_gas_price',
  'logs_bloom',
  'status',
];
/** Wallet transactions (operation 1) also carry `decoded`; resolve's transactions do not. */
export const LIST_TRANSACTION_FIELDS = [...TRANSACTION_FIELDS, 'decoded'];

export const EVENT_FIELDS = [
  'chain_id',
  'block_number',
  'block_hash',
  'block_timestamp',
  'transaction_hash',
  'transaction_index',
  'log_index',
  'address',
  'data',
  'topics',
];
export const LIST_EVENT_FIELDS = [...EVENT_FIELDS, 'decoded'];

export const BLOCK_FIELDS = [
  'chain_id',
  'block_number',
  'block_hash',
  'parent_hash',
  'block_timestamp',
  'nonce',
  'sha3_uncles',
  'mix_hash',
  'miner',
  'state_root',
  'transactions_root',
  'receipts_root',
  'logs_bloom',
  'size',
  'extra_data',
  'difficulty',
  'total_difficulty',
  'transaction_count',
  'gas_limit',
  'gas_used',
  'withdrawals_root',
  'base_fee_per_gas',
];

export const META_FIELDS = ['chain_ids', 'page', 'limit_per_chain', 'total_items', 'total_pages'];
export const META_OPTIONAL_FIELDS = ['address', 'signature'];
export const RESOLVE_DATA_FIELDS = ['type', 'blocks', 'transactions', 'events', 'address'];
export const DECODED_TRANSACTION_FIELDS = ['name', 'signature', 'inputs'];
export const DECODED_EVENT_FIELDS = ['name', 'signature', 'indexed_params', 'non_indexed_params'];
export const DECODE_TRANSACTION_RESULT_FIELDS = ['data', 'function_name', 'args'];
export const DECODE_LOG_RESULT_FIELDS = ['topics', 'data', 'event_name', 'args'];

export const NFT_COLLECTION_FIELDS = ['token', 'token_instances', 'amount'];
export const NFT_TOKEN_FIELDS = [
  'circulating_market_cap',
  'icon_url',
  'name',
  'decimals',
  'symbol',
  'address',
  'type',
  'holders',
  'exchange_rate',
  'total_supply',
];
export const NFT_INSTANCE_FIELDS = [
  'is_unique',
  'id',
  'owner',
  'token_type',
  'value',
  'holder_address_hash',
  'image_url',
  'animation_url',
  'external_app_url',
  'metadata',
  'token',
];
export const NFT_OWNER_FIELDS = [
  'hash',
  'implementation_name',
  'name',
  'is_contract',
  'is_verified',
  'ens_domain_name',
  'private_tags',
  'public_tags',
  'watchlist_names',
  'metadata',
];

export function sortedKeys(o: object): string[] {
  return Object.keys(o).sort();
}
export function sorted(list: string[]): string[] {
  return [...list].sort();
}
