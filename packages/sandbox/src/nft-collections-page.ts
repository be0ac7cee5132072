import { getAddress } from 'viem';
import type { NftCollection, NftCollectionsPage, NftOwner, NftTokenInstance } from '../../../src/shared-with-sandbox.js';
import type { ContractKind } from './abi.js';
import { badRequest } from './errors.js';
import { ADDRESS_RE } from './request-inputs.js';

export interface NftPageParams {
  chainId?: number | undefined;
  /** Token standards (`ERC-721`, `ERC-1155`, `ERC-404`); empty/undefined = all. */
  types?: string[] | undefined;
  /** `token_contract_address_hash` of next_page_params: collections after this address. */
  after?: string | null | undefined;
  /** `token_type` of next_page_params (the cursor's standard, with `shape.typeOrder` and on the ungrouped route). */
  afterType?: string | null | undefined;
  /** `token_id` of next_page_params (ungrouped route): instances of `after` below this id. */
  afterId?: string | null | undefined;
  pageSize: number;
  /** Every query parameter of the request, for a next_page_params that echoes them. */
  query?: Record<string, string> | undefined;
  /** How the answer is shaped (the contract's shape when absent). */
  shape?: NftWireShape | undefined;
}

const NFT_TYPES: Record<string, ContractKind> = { 'ERC-721': 'erc721', 'ERC-1155': 'erc1155' };
const TYPE_OF_KIND: Partial<Record<ContractKind, string>> = { erc721: 'ERC-721', erc1155: 'ERC-1155' };
/** Blockscout's order of token standards in the NFT routes. */
const TYPE_RANK: Record<string, number> = { 'ERC-721': 0, 'ERC-1155': 1, 'ERC-404': 2 };

/**
 * How the explorer routes shape their answers. Every field off is the contract's shape; each one
 * on is one behaviour of Blockscout's v2 API (the real explorer behind the pass-through).
 */
export interface NftWireShape {
  /** At most this many token instances per collection, highest token id first (Blockscout: 9). */
  instanceLimit?: number | undefined;
  /** An ERC-1155 collection's `amount` is its number of distinct token instances, not the summed balance. */
  distinctAmount?: boolean | undefined;
  /** Addresses (token, owner, holder) in EIP-55 checksum case. */
  checksummed?: boolean | undefined;
  /** Keys of `token`: `address`/`holders` (old), `address_hash`/`holders_count` (new), or both (new with the old as deprecated duplicates). */
  tokenKeys?: 'old' | 'both' | 'new' | undefined;
  /** Collections ERC-721, then ERC-1155, then ERC-404, each by contract hash (cursor: hash and type). */
  typeOrder?: boolean | undefined;
  /** next_page_params echoes the request's parameters (but `type`) plus the cursor and items_count (this page's items). */
  echoPageParams?: boolean | undefined;
}

/** An NFT contract some address holds tokens of. */
export interface HeldCollection {
  address: string;
  kind: ContractKind;
}

/** What a data source knows of NFT holdings, for the explorer route addresses/<address>/nft/collections. */
export interface NftHoldingsSource<C, H extends HeldCollection> {
  /** The chain of `chain_id`, or the first chain when absent; undefined when unknown. */
  chain(chainId: number | undefined): C | undefined;
  /** The holder's collections of these kinds on the chain, ordered by contract address. */
  held(chain: C, holder: string, kinds: ContractKind[]): H[];
  /** One item of the answer (see nftCollection); only called for the collections on the page. */
  collection(chain: C, holder: string, held: H): NftCollection;
}

interface Selection<C, H> {
  chain: C;
  holder: string;
  /** The holder's collections of the asked standards, in the route's order. */
  held: H[];
  /** Standards asked for, in Blockscout's order. */
  types: string[];
}

function select<C, H extends HeldCollection>(
  address: string,
  params: NftPageParams,
  source: NftHoldingsSource<C, H>,
  typeOrder: boolean,
): Selection<C, H> {
  if (!ADDRESS_RE.test(address)) throw badRequest(`invalid address hash: ${address}`);
  const asked = (params.types ?? []).filter((t) => t !== '');
  for (const t of asked)
    if (!NFT_TYPES[t] && t !== 'ERC-404') throw badRequest(`invalid type: ${t}`, 'allowed: ERC-721, ERC-404, ERC-1155');
  const types = asked.length === 0 ? Object.keys(TYPE_RANK) : Object.keys(TYPE_RANK).filter((t) => asked.includes(t));
  const kinds = types.map((t) => NFT_TYPES[t]).filter((k): k is ContractKind => k !== undefined);
  const chain = source.chain(params.chainId);
  if (!chain) throw badRequest(`unknown chain_id: ${params.chainId}`);
  const holder = address.toLowerCase();
  const held = source.held(chain, holder, kinds);
  if (typeOrder) held.sort((a, b) => rank(a.kind) - rank(b.kind) || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { chain, holder, held, types };
}

function rank(kind: ContractKind): number {
  return TYPE_RANK[TYPE_OF_KIND[kind]!]!;
}

/** `params` minus what Blockscout never echoes, plus the cursor; all values as sent. */
function echoed(params: NftPageParams, cursor: Record<string, string | number>, items: number): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(params.query ?? {})) if (k !== 'type') out[k] = v;
  return { ...out, ...cursor, items_count: items };
}

/**
 * One page of an address's NFT collections: `type` filters by standard (400 on an unknown one;
 * ERC-404 is accepted and matches nothing), `after` continues after a contract address (and, with
 * `shape.typeOrder`, after `afterType`), and `next_page_params` is set while more collections follow.
 */
export function nftCollectionsPage<C, H extends HeldCollection>(
  address: string,
  params: NftPageParams,
  source: NftHoldingsSource<C, H>,
): NftCollectionsPage {
  const shape = params.shape ?? {};
  const { chain, holder, held: full } = select(address, params, source, shape.typeOrder === true);
  const after = params.after?.toLowerCase();
  let from = 0;
  if (after) {
    const afterRank =
      shape.typeOrder && params.afterType !== undefined && params.afterType !== null ? TYPE_RANK[params.afterType] : undefined;
    from = full.findIndex((h) =>
      afterRank === undefined ? h.address > after : rank(h.kind) > afterRank || (rank(h.kind) === afterRank && h.address > after),
    );
    if (from < 0) from = full.length;
  }
  const page = full.slice(from, from + params.pageSize);
  const items = page.map((h) => shapeCollection(source.collection(chain, holder, h), shape));
  const last = page[page.length - 1];
  let next: NftCollectionsPage['next_page_params'] = null;
  if (full.length - from > params.pageSize && last) {
    const cursor = { token_contract_address_hash: last.address, token_type: TYPE_OF_KIND[last.kind]! };
    next = shape.echoPageParams ? echoed(params, cursor, page.length) : { ...cursor, items_count: from + page.length };
  }
  return { items, next_page_params: next };
}

function byIdDesc(a: NftTokenInstance, b: NftTokenInstance): number {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x > y ? -1 : x < y ? 1 : 0;
}

function checksum(address: string): string {
  return getAddress(address);
}

/** The token object with the keys and address case of `shape`. */
function shapeToken(token: NftCollection['token'], shape: NftWireShape): Record<string, unknown> {
  const address = shape.checksummed ? checksum(token.address) : token.address;
  const { address: _a, holders, ...rest } = token;
  const keys = shape.tokenKeys ?? 'old';
  const out: Record<string, unknown> = {};
  if (keys !== 'old') Object.assign(out, { address_hash: address, holders_count: holders });
  if (keys !== 'new') Object.assign(out, { address, holders });
  return { ...out, ...rest };
}

function shapeInstance(i: NftTokenInstance, shape: NftWireShape): NftTokenInstance {
  if (!shape.checksummed) return i;
  return {
    ...i,
    owner: i.owner ? { ...i.owner, hash: checksum(i.owner.hash) } : null,
    holder_address_hash: i.holder_address_hash === null ? null : checksum(i.holder_address_hash),
  };
}

/** A collection item as the explorer of `shape` sends it (the contract's item when `shape` is empty). */
function shapeCollection(item: NftCollection, shape: NftWireShape): NftCollection {
  if (Object.values(shape).every((v) => v === undefined || v === false || v === 'old')) return item;
  let instances = item.token_instances;
  const amount = shape.distinctAmount && item.token.type !== 'ERC-721' ? String(instances.length) : item.amount;
  if (shape.instanceLimit !== undefined) instances = [...instances].sort(byIdDesc).slice(0, shape.instanceLimit);
  return {
    token: shapeToken(item.token, shape) as unknown as NftCollection['token'],
    token_instances: instances.map((i) => shapeInstance(i, shape)),
    amount,
  };
}

/** One page of Blockscout's ungrouped addresses/<hash>/nft route: every instance, each with its token. */
export interface NftInstancesPage {
  items: Record<string, unknown>[];
  next_page_params: Record<string, string | number> | null;
}

/**
 * Blockscout's ungrouped route: every token instance the address holds, ERC-721 then ERC-1155 then
 * ERC-404, each by contract hash and then highest token id first; the cursor is (contract, token
 * id, type) and next_page_params echoes the request as the collections route of `shape` does.
 */
export function nftInstancesPage<C, H extends HeldCollection>(
  address: string,
  params: NftPageParams,
  source: NftHoldingsSource<C, H>,
): NftInstancesPage {
  const shape = params.shape ?? {};
  const { chain, holder, held } = select(address, params, source, true);
  const all: { rank: number; contract: string; type: string; instance: NftTokenInstance; token: NftCollection['token'] }[] = [];
  for (const h of held) {
    const item = source.collection(chain, holder, h);
    for (const instance of [...item.token_instances].sort(byIdDesc)) {
      all.push({ rank: rank(h.kind), contract: h.address, type: item.token.type, instance, token: item.token });
    }
  }
  let from = 0;
  const after = params.after?.toLowerCase();
  if (after && params.afterType && params.afterId !== undefined && params.afterId !== null) {
    const afterRank = TYPE_RANK[params.afterType] ?? -1;
    const afterId = /^\d+$/.test(params.afterId) ? BigInt(params.afterId) : -1n;
    from = all.findIndex(
      (e) =>
        e.rank > afterRank || (e.rank === afterRank && (e.contract > after || (e.contract === after && BigInt(e.instance.id) < afterId))),
    );
    if (from < 0) from = all.length;
  }
  const page = all.slice(from, from + params.pageSize);
  const last = page[page.length - 1];
  const next =
    all.length - from > params.pageSize && last
      ? echoed(params, { token_contract_address_hash: last.contract, token_id: last.instance.id, token_type: last.type }, page.length)
      : null;
  return {
    items: page.map((e) => ({ ...shapeInstance(e.instance, shape), token: shapeToken(e.token, shape) })),
    next_page_params: next,
  };
}

/** The token facts of a collection item; null where the source does not know them. */
export interface NftCollectionFacts extends HeldCollection {
  name: string | null;
  symbol: string | null;
  decimals: string | null;
  holders: string | null;
  totalSupply: string | null;
}

/** One token a holder has of a collection (amount decimal: 1 for ERC-721, the balance for ERC-1155). */
export interface NftTokenFacts {
  id: string;
  amount: string;
  imageUrl: string | null;
  metadata: Record<string, unknown> | null;
}

/** An item of the NFT collections answer; ERC-721 instances are unique and name their owner. */
export function nftCollection(facts: NftCollectionFacts, holder: string, tokens: NftTokenFacts[], owner: () => NftOwner): NftCollection {
  const type = TYPE_OF_KIND[facts.kind]!;
  const unique = facts.kind === 'erc721';
  return {
    token: {
      circulating_market_cap: null,
      icon_url: null,
      name: facts.name,
      decimals: facts.decimals,
      symbol: facts.symbol,
      address: facts.address,
      type,
      holders: facts.holders,
      exchange_rate: null,
      total_supply: facts.totalSupply,
    },
    token_instances: tokens.map((t) => ({
      is_unique: unique,
      id: t.id,
      owner: unique ? owner() : null,
      token_type: type,
      value: t.amount,
      holder_address_hash: holder,
      image_url: t.imageUrl,
      animation_url: null,
      external_app_url: null,
      metadata: t.metadata,
      token: null,
    })),
    amount: tokens.reduce((a, t) => a + BigInt(t.amount), 0n).toString(),
  };
}

/** The owner of a unique token instance. */
export function nftOwner(holder: string, isContract: boolean, ensName: string | null): NftOwner {
  return {
    hash: holder,
    implementation_name: null,
    name: null,
    is_contract: isContract,
    is_verified: false,
    ens_domain_name: ensName,
    private_tags: [],
    public_tags: [],
    watchlist_names: [],
    metadata: null,
  };
}
