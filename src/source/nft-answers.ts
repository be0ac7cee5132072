/**
 * The explorer's NFT pages (Blockscout v2 shapes; newer Blockscout renamed a few keys) normalised
 * into the record types of records.ts, each field checked as in answer-fields.ts.
 */
import type {
  NftCollection,
  NftCollectionsPage,
  NftInstancesPage,
  NftListedInstance,
  NftOwner,
  NftTagRef,
  NftToken,
  NftTokenInstance,
} from './records.js';
import {
  pathOf,
  fail,
  describe,
  isObj,
  str,
  strOrNull,
  hex,
  hexOrNull,
  boolOrNull,
  objOrNull,
  arrayOrEmpty,
  record,
  type Obj,
} from './answer-fields.js';

function tagRefs(v: unknown, url: string, base: string, i: number, key: string): NftTagRef[] {
  const raw = arrayOrEmpty(v, url, base, i, key);
  const p = pathOf(base, i, key);
  const out = new Array<NftTagRef>(raw.length);
  for (let j = 0; j < raw.length; j++) {
    const t = record(raw[j], url, p, j);
    out[j] = {
      address_hash: hexOrNull(t.address_hash, url, p, j, 'address_hash'),
      display_name: strOrNull(t.display_name, url, p, j, 'display_name'),
      label: strOrNull(t.label, url, p, j, 'label'),
    };
  }
  return out;
}

function owner(v: unknown, url: string, base: string, i: number): NftOwner | null {
  if (v === undefined || v === null) return null;
  const p = pathOf(base, i, 'owner');
  const o = record(v, url, p, -1);
  const watch = arrayOrEmpty(o.watchlist_names, url, p, -1, 'watchlist_names');
  const watchlist_names = new Array<{ display_name: string | null; label: string | null }>(watch.length);
  for (let j = 0; j < watch.length; j++) {
    const w = record(watch[j], url, `${p}.watchlist_names`, j);
    watchlist_names[j] = {
      display_name: strOrNull(w.display_name, url, `${p}.watchlist_names`, j, 'display_name'),
      label: strOrNull(w.label, url, `${p}.watchlist_names`, j, 'label'),
    };
  }
  return {
    hash: hex(o.hash ?? o.address_hash, url, p, -1, 'hash'),
    implementation_name: strOrNull(o.implementation_name, url, p, -1, 'implementation_name'),
    name: strOrNull(o.name, url, p, -1, 'name'),
    is_contract: boolOrNull(o.is_contract, url, p, -1, 'is_contract'),
    is_verified: boolOrNull(o.is_verified, url, p, -1, 'is_verified'),
    ens_domain_name: strOrNull(o.ens_domain_name, url, p, -1, 'ens_domain_name'),
    private_tags: tagRefs(o.private_tags, url, p, -1, 'private_tags'),
    public_tags: tagRefs(o.public_tags, url, p, -1, 'public_tags'),
    watchlist_names,
    metadata: objOrNull(o.metadata, url, p, -1, 'metadata'),
  };
}

function nftToken(v: unknown, url: string, base: string): NftToken {
  const t = record(v, url, base, -1);
  return {
    circulating_market_cap: strOrNull(t.circulating_market_cap, url, base, -1, 'circulating_market_cap'),
    icon_url: strOrNull(t.icon_url, url, base, -1, 'icon_url'),
    name: strOrNull(t.name, url, base, -1, 'name'),
    decimals: strOrNull(t.decimals, url, base, -1, 'decimals'),
    symbol: strOrNull(t.symbol, url, base, -1, 'symbol'),
    address: hex(t.address ?? t.address_hash, url, base, -1, 'address'),
    type: str(t.type, url, base, -1, 'type'),
    holders: strOrNull(t.holders ?? t.holders_count, url, base, -1, 'holders'),
    exchange_rate: strOrNull(t.exchange_rate, url, base, -1, 'exchange_rate'),
    total_supply: strOrNull(t.total_supply, url, base, -1, 'total_supply'),
  };
}

function nftInstance(v: unknown, url: string, base: string, i: number): NftTokenInstance {
  const r = record(v, url, base, i);
  return {
    is_unique: boolOrNull(r.is_unique, url, base, i, 'is_unique'),
    id: str(r.id, url, base, i, 'id'),
    owner: owner(r.owner, url, base, i),
    token_type: strOrNull(r.token_type, url, base, i, 'token_type'),
    value: strOrNull(r.value, url, base, i, 'value'),
    holder_address_hash: hexOrNull(r.holder_address_hash, url, base, i, 'holder_address_hash'),
    image_url: strOrNull(r.image_url, url, base, i, 'image_url'),
    animation_url: strOrNull(r.animation_url, url, base, i, 'animation_url'),
    external_app_url: strOrNull(r.external_app_url, url, base, i, 'external_app_url'),
    metadata: objOrNull(r.metadata, url, base, i, 'metadata'),
    token: r.token === undefined ? null : r.token,
  };
}

export function normaliseNftCollectionsPage(json: unknown, url: string): NftCollectionsPage {
  const { page, rawItems } = pageItems(json, url);
  const items = new Array<NftCollection>(rawItems.length);
  for (let i = 0; i < rawItems.length; i++) {
    const r = record(rawItems[i], url, '$.items', i);
    const p = `$.items[${i}]`;
    const rawInstances = arrayOrEmpty(r.token_instances, url, p, -1, 'token_instances');
    const instances = new Array<NftTokenInstance>(rawInstances.length);
    for (let j = 0; j < rawInstances.length; j++) instances[j] = nftInstance(rawInstances[j], url, `${p}.token_instances`, j);
    items[i] = {
      token: nftToken(r.token, url, `${p}.token`),
      token_instances: instances,
      amount: str(r.amount, url, p, -1, 'amount'),
    };
  }
  return { items, next_page_params: nextPageParams(page, url) };
}

/** A page of Blockscout's ungrouped addresses/<hash>/nft route: instances, each with its `token`. */
export function normaliseNftInstancesPage(json: unknown, url: string): NftInstancesPage {
  const { page, rawItems } = pageItems(json, url);
  const items = new Array<NftListedInstance>(rawItems.length);
  for (let i = 0; i < rawItems.length; i++) {
    const r = record(rawItems[i], url, '$.items', i);
    items[i] = { token: nftToken(r.token, url, `$.items[${i}].token`), instance: { ...nftInstance(r, url, '$.items', i), token: null } };
  }
  return { items, next_page_params: nextPageParams(page, url) };
}

/** A Blockscout page and its `items`: refused unless the page is an object with an array there. */
function pageItems(json: unknown, url: string): { page: Obj; rawItems: unknown[] } {
  if (!isObj(json)) return fail(url, '$', -1, '', `expected an object, got ${describe(json)}`);
  const rawItems = json.items;
  if (!Array.isArray(rawItems)) return fail(url, '$', -1, 'items', `expected an array, got ${describe(rawItems)}`);
  return { page: json, rawItems };
}

function nextPageParams(json: Obj, url: string): Record<string, string | number> | null {
  if (!('next_page_params' in json)) return fail(url, '$', -1, 'next_page_params', 'expected an object or null, got missing');
  const next = json.next_page_params;
  if (next === null) return null;
  if (!isObj(next)) return fail(url, '$', -1, 'next_page_params', `expected an object or null, got ${describe(next)}`);
  const out: Record<string, string | number> = {};
  for (const key in next) {
    const value = next[key];
    if (typeof value === 'string' || typeof value === 'number') out[key] = value;
    else if (typeof value === 'boolean') out[key] = String(value);
    else if (value === null || value === undefined)
      continue; // not sent back, as the explorer's own client does
    else return fail(url, '$.next_page_params', -1, key, `expected a string or number, got ${describe(value)}`);
  }
  return out;
}
