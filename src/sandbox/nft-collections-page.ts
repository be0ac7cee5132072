import type { NftCollection, NftCollectionsPage, NftOwner } from '../source/records.js';
import type { ContractKind } from './abi.js';
import type { NftPageParams } from './data.js';
import { badRequest } from './errors.js';
import { ADDRESS_RE } from './request-inputs.js';

const NFT_TYPES: Record<string, ContractKind> = { 'ERC-721': 'erc721', 'ERC-1155': 'erc1155' };
const TYPE_OF_KIND: Partial<Record<ContractKind, string>> = { erc721: 'ERC-721', erc1155: 'ERC-1155' };

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

/**
 * One page of an address's NFT collections: `type` filters by standard (400 on an unknown one;
 * ERC-404 is accepted and matches nothing), `after` continues after a contract address, and
 * `next_page_params` is set while more collections follow.
 */
export function nftCollectionsPage<C, H extends HeldCollection>(
  address: string,
  params: NftPageParams,
  source: NftHoldingsSource<C, H>,
): NftCollectionsPage {
  if (!ADDRESS_RE.test(address)) throw badRequest(`invalid address hash: ${address}`);
  const types = (params.types ?? []).filter((t) => t !== '');
  for (const t of types) if (!NFT_TYPES[t] && t !== 'ERC-404') throw badRequest(`invalid type: ${t}`, 'allowed: ERC-721, ERC-404, ERC-1155');
  const kinds = types.length === 0 ? (['erc721', 'erc1155'] as ContractKind[]) : types.map((t) => NFT_TYPES[t]).filter((k): k is ContractKind => k !== undefined);
  const chain = source.chain(params.chainId);
  if (!chain) throw badRequest(`unknown chain_id: ${params.chainId}`);
  const holder = address.toLowerCase();
  const full = source.held(chain, holder, kinds);
  const after = params.after?.toLowerCase();
  const all = after ? full.filter((h) => h.address > after) : full;
  const before = full.length - all.length;
  const page = all.slice(0, params.pageSize);
  const items = page.map((h) => source.collection(chain, holder, h));
  const last = page[page.length - 1];
  return {
    items,
    next_page_params:
      all.length > params.pageSize && last
        ? { token_contract_address_hash: last.address, token_type: TYPE_OF_KIND[last.kind]!, items_count: before + page.length }
        : null,
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
