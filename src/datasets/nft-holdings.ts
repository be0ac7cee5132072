/**
 * The nft_holdings dataset: a daily snapshot of the NFTs a wallet holds on a chain, from the
 * explorer route (collections with their token instances, following next_page_params).
 * One row per token instance, with its collection's fields and the metadata as JSON text.
 * One unit = one wallet x chain x UTC day (the planner's snapshot window); re-runs on the same
 * day find the window completed and take no second snapshot.
 *
 * Blockscout lists at most 9 instances per collection. A collection that may be cut short is
 * completed from Blockscout's ungrouped addresses/<hash>/nft route when the explorer serves it;
 * otherwise its rows say so (collection_complete) and the run report warns.
 */
import { InsightExportError, InterruptedError } from '../errors.js';
import type { InsightClient } from '../source/client.js';
import { HttpStatusError } from '../source/errors.js';
import type { ChainDone, RecordPage } from '../source/paginator.js';
import type { NftTokenType } from '../source/query.js';
import type { NftCollection, NftTokenInstance } from '../source/records.js';
import { column, isoDate, type RowOf } from '../columns/columns.js';
import type { Dataset, WindowRequest } from './dataset.js';

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
  /** What the snapshot holds of the collection (the same object for all its rows). */
  completeness: Completeness;
}

/** Instances of a collection in the snapshot against those the wallet holds. */
export interface Completeness {
  returned: number;
  /** null when the explorer's answer does not say. */
  held: number | null;
  /** null when the explorer's answer cannot tell. */
  complete: boolean | null;
}

/** The target of a wallet's snapshot. */
export function nftHoldingsTarget(wallet: string, types: readonly NftTokenType[]): NftHoldingsTarget {
  return { kind: 'nft_holdings', address: wallet.toLowerCase(), types: [...types] };
}

/** Token instances Blockscout lists per collection at most (its @preloaded_nfts_limit). */
export const BLOCKSCOUT_PRELOADED_INSTANCES = 9;

/** A value of the explorer route that does not fit its column (e.g. a token id that is not an integer). */
export class NftValueError extends InsightExportError {
  override name = 'NftValueError';
}

export const NFT_HOLDING_COLUMNS = [
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
  column(
    'collection_amount',
    'uint256',
    "The collection's amount as the explorer sends it: ERC-721 the number of tokens held; ERC-1155 and ERC-404 the number of distinct token ids held on Blockscout (not the summed balance; the sandbox's contract profile sends the summed balance)",
  ),
  column('collection_instances_returned', 'int64', 'Token instances of the collection in this snapshot (its rows)', false),
  column('collection_instances_held', 'int64', 'Token instances of the collection the wallet holds, when the explorer says'),
  column(
    'collection_complete',
    'bool',
    'True when every instance the wallet holds is a row; false when the explorer listed fewer (Blockscout lists at most 9 per collection) and could not complete them; null when its answer cannot tell',
  ),
  column('token_id', 'uint256', 'Token id, exact decimal', false),
  column('value', 'uint256', 'Amount of this token id the wallet holds (1 for ERC-721)'),
  column('is_unique', 'bool', 'True for a unique (ERC-721) token'),
  column('owner_address', 'string', 'Owner of the instance (owner.hash), when the route sends one'),
  column('holder_address', 'string', 'holder_address_hash of the instance'),
  column('image_url', 'string', 'Image URL'),
  column('animation_url', 'string', 'Animation URL'),
  column('external_app_url', 'string', 'External app URL'),
  column('metadata', 'json', 'Token metadata (name, description, attributes ...), JSON text'),
] as const;

type NftHoldingRow = RowOf<typeof NFT_HOLDING_COLUMNS>;

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

export const nftHoldingsDataset: Dataset<NftHoldingsTarget, NftHoldingRecord, 'nft_holdings', 'wallet'> = {
  name: 'nft_holdings',
  capabilities: {
    targetKinds: ['wallet'],
    defaultFor: [],
    extent: 'snapshot',
    rangeAxes: [],
    filters: 'none',
    targetOption: 'nft_types',
  },
  buildTarget: (unit) => nftHoldingsTarget(unit.wallet, unit.nft_types),
  tableName: () => 'nft_holdings',
  columns: () => [...NFT_HOLDING_COLUMNS],
  sortKey: ['chain_id', 'explorer order (collection, then token id)'],
  targetKey: (target) => target.address,
  collection: {
    kind: 'streamed',
    async *streamWindow(client: InsightClient, target, req: WindowRequest): AsyncGenerator<RecordPage<NftHoldingRecord> | ChainDone> {
      const snapshotDate = isoDate(req.start);
      const wanted = new Set<string>(target.types);
      for (const chainId of req.chainIds) {
        // The same instance twice (a collection repeated across pages) is one row.
        const seen = new Set<string>();
        const open = new Map<string, OpenCollection>();
        const add = (into: NftHoldingRecord[], collection: NftCollection, instance: NftTokenInstance, completeness: Completeness) => {
          const r: NftHoldingRecord = { chain_id: chainId, snapshot_date: snapshotDate, collection, instance, completeness };
          const id = itemId(r, target);
          if (seen.has(id)) return;
          seen.add(id);
          into.push(r);
        };
        // Rows go out in the explorer's order: once a collection waits for its completion, the
        // collections after it wait too.
        const queue: OpenCollection[] = [];
        for await (const collection of client.nftCollections(target.address, { types: target.types, chainIds: [chainId] })) {
          if (req.signal?.aborted) throw new InterruptedError(String(req.signal.reason ?? 'signal'));
          if (!wanted.has(collection.token.type)) continue;
          const completeness: Completeness = { returned: distinctIds(collection.token_instances), held: null, complete: null };
          const records: NftHoldingRecord[] = [];
          for (const instance of collection.token_instances) add(records, collection, instance, completeness);
          const item: OpenCollection = { collection, completeness, records, values: instanceValues(collection.token_instances) };
          if (!listsAll(collection, completeness)) open.set(collection.token.address.toLowerCase(), item);
          if (open.size > 0) queue.push(item);
          else if (records.length > 0) yield { chainId, records };
        }
        const warnings: string[] = [];
        if (open.size > 0) {
          const completed = await completeFromUngroupedRoute(client, target, chainId, open, add, req.signal);
          for (const o of open.values()) {
            settle(o, completed);
            if (o.completeness.complete !== true) warnings.push(incompleteWarning(chainId, o, completed));
          }
        }
        for (const o of queue) if (o.records.length > 0) yield { chainId, records: o.records };
        yield { chainId, done: true, ...(warnings.length > 0 ? { warnings } : {}) };
      }
    },
  },
  position: (r) => ({ block_number: 0, block_timestamp: Date.parse(`${r.snapshot_date}T00:00:00Z`) / 1000 }),
  chainId: (r) => r.chain_id,
  itemId,
  toRow(r, target): NftHoldingRow {
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
      collection_instances_returned: r.completeness.returned,
      collection_instances_held: r.completeness.held,
      collection_complete: r.completeness.complete,
      token_id: uint(i.id, 'token_instances[].id', r)!,
      value: uint(i.value, 'token_instances[].value', r),
      is_unique: i.is_unique,
      owner_address: i.owner?.hash?.toLowerCase() ?? null,
      holder_address: i.holder_address_hash?.toLowerCase() ?? null,
      image_url: i.image_url,
      animation_url: i.animation_url,
      external_app_url: i.external_app_url,
      metadata: i.metadata === null ? null : JSON.stringify(i.metadata),
    };
  },
  partitionDate: (row) => String(row.snapshot_date),
};

/** A collection whose listing may be cut short, with its rows held back until that is settled. */
interface OpenCollection {
  collection: NftCollection;
  completeness: Completeness;
  records: NftHoldingRecord[];
  /** Summed `value` of the listed instances (null when one has none). */
  values: bigint | null;
}

function distinctIds(instances: NftTokenInstance[]): number {
  return new Set(instances.map((i) => i.id.trim())).size;
}

function instanceValues(instances: NftTokenInstance[]): bigint | null {
  let sum = 0n;
  for (const i of instances) {
    if (i.value === null || !/^\s*[0-9]+\s*$/.test(i.value)) return null;
    sum += BigInt(i.value.trim());
  }
  return sum;
}

function amountOf(collection: NftCollection): bigint | null {
  return /^\s*[0-9]+\s*$/.test(collection.amount) ? BigInt(collection.amount.trim()) : null;
}

/**
 * Whether a collection item certainly lists every instance the wallet holds (filling in
 * `completeness`): its amount counts the listed instances, or (ERC-1155/404, fewer instances than
 * Blockscout's cap, so none cut) the listed balances add up to it, as an explorer that sends the
 * summed balance does.
 */
function listsAll(collection: NftCollection, c: Completeness): boolean {
  const amount = amountOf(collection);
  const sum = instanceValues(collection.token_instances);
  const all =
    amount === BigInt(c.returned) ||
    (collection.token.type !== 'ERC-721' && sum !== null && sum === amount && c.returned < BLOCKSCOUT_PRELOADED_INSTANCES);
  if (all) {
    c.held = c.returned;
    c.complete = true;
  }
  return all;
}

/** Whether the ungrouped route is served, per client (one 404 is enough to know). */
const UNGROUPED_SERVED = new WeakMap<InsightClient, boolean>();

/**
 * Adds to each open collection the instances Blockscout's ungrouped route lists for it; false
 * (nothing added) when the explorer does not serve that route.
 */
async function completeFromUngroupedRoute(
  client: InsightClient,
  target: NftHoldingsTarget,
  chainId: number,
  open: Map<string, OpenCollection>,
  add: (into: NftHoldingRecord[], collection: NftCollection, instance: NftTokenInstance, completeness: Completeness) => void,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (UNGROUPED_SERVED.get(client) === false) return false;
  const types = target.types.filter((t) => [...open.values()].some((o) => o.collection.token.type === t));
  let first = true;
  try {
    for await (const listed of client.nftInstances(target.address, { types, chainIds: [chainId] })) {
      first = false;
      if (signal?.aborted) throw new InterruptedError(String(signal.reason ?? 'signal'));
      const o = open.get(listed.token.address.toLowerCase());
      if (!o) continue;
      const before = o.records.length;
      add(o.records, o.collection, listed.instance, o.completeness);
      if (o.records.length > before) {
        o.completeness.returned++;
        o.values =
          o.values === null || listed.instance.value === null || !/^\s*[0-9]+\s*$/.test(listed.instance.value)
            ? null
            : o.values + BigInt(listed.instance.value.trim());
      }
    }
  } catch (err) {
    if (first && err instanceof HttpStatusError && err.status === 404) {
      UNGROUPED_SERVED.set(client, false);
      return false;
    }
    throw err;
  }
  UNGROUPED_SERVED.set(client, true);
  return true;
}

/** The final completeness of an open collection, after the ungrouped route (`completed`) or without it. */
function settle(o: OpenCollection, completed: boolean): void {
  const c = o.completeness;
  const amount = amountOf(o.collection);
  const erc721 = o.collection.token.type === 'ERC-721';
  if (completed) {
    // The ungrouped route lists every instance: complete when they reach the amount (instances, or summed balances).
    c.complete = amount !== null && (BigInt(c.returned) >= amount || (!erc721 && o.values !== null && o.values >= amount));
    c.held = c.complete ? c.returned : amount === null ? null : Number(amount);
    return;
  }
  if (erc721 || c.returned >= BLOCKSCOUT_PRELOADED_INSTANCES) {
    // Blockscout's amount counts instances; its listing stops at the cap.
    const sumsBalances = !erc721 && o.values !== null && o.values === amount;
    c.complete = sumsBalances ? null : false;
    c.held = sumsBalances || amount === null ? null : Number(amount);
    return;
  }
  c.complete = false;
  c.held = null;
}

function incompleteWarning(chainId: number, o: OpenCollection, completed: boolean): string {
  const c = o.completeness;
  const what = `chain ${chainId}: collection ${o.collection.token.address.toLowerCase()} (${o.collection.token.type})`;
  if (c.complete === null) {
    return `${what}: cannot tell whether its ${c.returned} listed token instances are all the wallet holds (amount ${o.collection.amount} may count instances or sum balances); the explorer does not serve the ungrouped addresses/<hash>/nft route to check`;
  }
  const held = c.held === null ? `amount ${o.collection.amount}` : `${c.held} held`;
  return completed
    ? `${what}: ${c.returned} token instances exported of ${held}, even with the ungrouped addresses/<hash>/nft route`
    : `${what}: ${c.returned} token instances exported of ${held}; the explorer lists at most ${BLOCKSCOUT_PRELOADED_INSTANCES} per collection and does not serve the ungrouped addresses/<hash>/nft route to complete them`;
}
