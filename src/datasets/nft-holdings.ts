/**
 * The nft_holdings dataset: a daily snapshot of the NFTs a wallet holds on a chain, from the
 * explorer route (collections with their token instances, following next_page_params).
 * One row per token instance, with its collection's fields and the metadata as JSON text.
 * One unit = one wallet x chain x UTC day (the planner's snapshot window); re-runs on the same
 * day find the window completed and take no second snapshot.
 */
import { InsightExportError, InterruptedError } from '../errors.js';
import type { InsightClient } from '../source/client.js';
import type { ChainDone, PagedBatch } from '../source/paginator.js';
import type { NftTokenType } from '../source/query.js';
import type { NftCollection, NftTokenInstance } from '../source/records.js';
import { column, isoDate, type Column, type Row } from './columns.js';
import { BLOCK_WINDOW_FILTERS, type ListDataset, type WindowRequest } from './dataset.js';

export interface NftHoldingsTarget {
  kind: 'nft_holdings';
  /** Lowercase 0x wallet address. */
  address: string;
  /** Token standards asked for (the route's `type`); rows of other standards are dropped. */
  types: NftTokenType[];
}

export interface NftHoldingRecord {
  chain_id: number;
  /** `YYYY-MM-DD`: the UTC day of the snapshot. */
  snapshot_date: string;
  collection: NftCollection;
  instance: NftTokenInstance;
}

/** A value of the explorer route that does not fit its column (e.g. a token id that is not an integer). */
export class NftValueError extends InsightExportError {
  override name = 'NftValueError';
}

export const NFT_HOLDING_COLUMNS: readonly Column[] = [
  column('item_id', 'string', 'Stable unique key: chain:wallet:token:id:snapshot_date', false),
  column('chain_id', 'int64', 'Chain id', false),
  column('snapshot_date', 'date', 'UTC day the holdings were read (the date partition)', false),
  column('wallet_address', 'string', 'The exported wallet', false),
  column('token_address', 'string', 'Collection (token contract) address', false),
  column('token_type', 'string', 'Token standard: ERC-721, ERC-1155 or ERC-404', false),
  column('token_name', 'string', 'Collection name'),
  column('token_symbol', 'string', 'Collection symbol'),
  column('token_decimals', 'int32', 'Collection decimals'),
  column('token_holders', 'uint256', 'Number of holders of the collection'),
  column('token_total_supply', 'uint256', 'Total supply of the collection'),
  column('token_exchange_rate', 'string', 'Exchange rate, as sent'),
  column('token_circulating_market_cap', 'string', 'Circulating market cap, as sent'),
  column('token_icon_url', 'string', 'Collection icon URL'),
  column('collection_amount', 'uint256', 'Tokens of the collection the wallet holds'),
  column('token_id', 'uint256', 'Token id, exact decimal', false),
  column('value', 'uint256', 'Amount of this token id the wallet holds (1 for ERC-721)'),
  column('is_unique', 'bool', 'True for a unique (ERC-721) token'),
  column('owner_address', 'string', 'Owner of the instance (owner.hash), when the route sends one'),
  column('holder_address', 'string', 'holder_address_hash of the instance'),
  column('image_url', 'string', 'Image URL'),
  column('animation_url', 'string', 'Animation URL'),
  column('external_app_url', 'string', 'External app URL'),
  column('metadata', 'json', 'Token metadata (name, description, attributes ...), JSON text'),
];

function itemId(r: NftHoldingRecord, target: NftHoldingsTarget): string {
  const id = /^\s*[0-9]+\s*$/.test(r.instance.id) ? BigInt(r.instance.id.trim()).toString() : r.instance.id;
  return `${r.chain_id}:${target.address}:${r.collection.token.address.toLowerCase()}:${id}:${r.snapshot_date}`;
}

/** An exact non-negative decimal integer (leading zeros dropped), or null. */
function uint(value: string | null, field: string, r: NftHoldingRecord): string | null {
  if (value === null || value === '') return null;
  const v = value.trim();
  if (!/^[0-9]+$/.test(v)) {
    throw new NftValueError(`The explorer sent a ${field} that is not a non-negative integer`, {
      details: `${field} = ${JSON.stringify(value)} (chain ${r.chain_id}, token ${r.collection.token.address} id ${r.instance.id})`,
      hint: 'Check the explorer base URL points at a Blockscout v2 compatible route.',
    });
  }
  return BigInt(v).toString();
}

function int32(value: string | null): number | null {
  if (value === null || !/^\s*[0-9]{1,9}\s*$/.test(value)) return null;
  return Number(value);
}

export const nftHoldingsDataset: ListDataset<NftHoldingsTarget, NftHoldingRecord> = {
  name: 'nft_holdings',
  tableName: () => 'nft_holdings',
  columns: () => [...NFT_HOLDING_COLUMNS],
  sortKey: ['chain_id', 'explorer order (collection, then token id)'],
  windowFilters: BLOCK_WINDOW_FILTERS,
  targetKey: (target) => target.address,
  async fetchPage() {
    throw new Error('nft_holdings are exported by streamWindow');
  },
  async *streamWindow(client: InsightClient, target, req: WindowRequest): AsyncGenerator<PagedBatch<NftHoldingRecord> | ChainDone> {
    const snapshotDate = isoDate(req.start);
    const wanted = new Set<string>(target.types);
    for (const chainId of req.chainIds) {
      // The same instance twice (a collection repeated across pages) is one row.
      const seen = new Set<string>();
      for await (const collection of client.nftCollections(target.address, { types: target.types, chainIds: [chainId] })) {
        if (req.signal?.aborted) throw new InterruptedError(String(req.signal.reason ?? 'signal'));
        if (!wanted.has(collection.token.type)) continue;
        const records: NftHoldingRecord[] = [];
        for (const instance of collection.token_instances) {
          const r: NftHoldingRecord = { chain_id: chainId, snapshot_date: snapshotDate, collection, instance };
          const id = itemId(r, target);
          if (seen.has(id)) continue;
          seen.add(id);
          records.push(r);
        }
        if (records.length > 0) yield { chainId, records };
      }
      yield { chainId, done: true };
    }
  },
  position: (r) => ({ block_number: 0, block_timestamp: Date.parse(`${r.snapshot_date}T00:00:00Z`) / 1000 }),
  chainId: (r) => r.chain_id,
  itemId,
  toRow(r, target) {
    const t = r.collection.token;
    const i = r.instance;
    return {
      item_id: itemId(r, target),
      chain_id: r.chain_id,
      snapshot_date: r.snapshot_date,
      wallet_address: target.address,
      token_address: t.address.toLowerCase(),
      token_type: t.type,
      token_name: t.name,
      token_symbol: t.symbol,
      token_decimals: int32(t.decimals),
      token_holders: uint(t.holders, 'token.holders', r),
      token_total_supply: uint(t.total_supply, 'token.total_supply', r),
      token_exchange_rate: t.exchange_rate,
      token_circulating_market_cap: t.circulating_market_cap,
      token_icon_url: t.icon_url,
      collection_amount: uint(r.collection.amount, 'amount', r),
      token_id: uint(i.id, 'token_instances[].id', r)!,
      value: uint(i.value, 'token_instances[].value', r),
      is_unique: i.is_unique,
      owner_address: i.owner?.hash?.toLowerCase() ?? null,
      holder_address: i.holder_address_hash?.toLowerCase() ?? null,
      image_url: i.image_url,
      animation_url: i.animation_url,
      external_app_url: i.external_app_url,
      metadata: i.metadata === null ? null : JSON.stringify(i.metadata),
    } satisfies Row;
  },
  partitionDate: (row) => String(row.snapshot_date),
};
