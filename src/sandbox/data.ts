import type {
  AggregationRow,
  BlockRecord,
  DecodeResponse,
  EventRecord,
  NftCollection,
  NftCollectionsPage,
  NftOwner,
  ResolveData,
  ResponseMeta,
  TransactionRecord,
} from '../source/records.js';
import { ABI_BY_KIND, TOPIC0, decodeCallWithAbi, parseEventSignature, type BytesStyle, type ContractKind } from './abi.js';
import {
  ChainState,
  EVENT_COLUMNS,
  SandboxDataImpl,
  TRANSACTION_COLUMNS,
  type BuildOptions,
  type ChainInfo,
  type ContractInfo,
  type EncodedArgs,
  type NftHolding,
  type WalletInfo,
} from './dataset.js';
import { SandboxHttpError, badRequest } from './errors.js';
import { hash3 } from './prng.js';
import { aggregate, parseListQuery, selectAll, selectPage, type ChainSource, type ListQuery, type SelectedRow } from './query.js';

export type { ChainInfo, ContractInfo, EncodedArgs, NftHolding, WalletInfo } from './dataset.js';
export type { ListQuery } from './query.js';

/** Options of the list queries that change what the (simulated) service sends. */
export interface ListOptions {
  /** Return a self-transfer twice, as the real UNION ALL query did. */
  duplicateSelfTransfers?: boolean | undefined;
  /** Render some decoded bytes values as base64 or number arrays (deterministic per row). */
  decodedVariants?: boolean | undefined;
}

/**
 * A list result with normalised records (chain_id a number, as in src/source/records.ts).
 * `data` is absent and `aggregations` set when the query used group_by/aggregate.
 */
export interface ListResult<T> {
  meta: ResponseMeta;
  data?: T[];
  aggregations?: AggregationRow[];
  /** Row handles of `data` (same order), for per-row wire variations. */
  rowKeys?: number[];
}

export interface NftPageParams {
  chainId?: number | undefined;
  /** Token standards (`ERC-721`, `ERC-1155`, `ERC-404`); empty/undefined = all. */
  types?: string[] | undefined;
  /** `token_contract_address_hash` of next_page_params: collections after this address. */
  after?: string | null | undefined;
  pageSize: number;
}

/**
 * Ground truth of a sandbox: the deterministic data set (same seed and size => identical data)
 * plus the query functions the HTTP routes use, so tests can compare without HTTP.
 *
 * - `chains`: chain id, name, block time, first/head block number and timestamp, row counts.
 * - `wallets`: address, optional name (`alice.eth`), wallet-route rows per chain. Wallet 0 is hot
 *   (about a third of all transactions), wallets 1 and 2 warm, the rest ordinary.
 * - `contracts`: chain, address, kind (erc20 | erc721 | erc1155 | unknown), name, symbol.
 * - `transactions(chainId)` / `logs(chainId)`: every row of a chain as normalised records, in
 *   (block_number, transaction_index, log_index) order; `logs` only rows with a log (one per
 *   successful token or unknown-contract call).
 * - `transactionArgs` / `logArgs`: what a call / log was encoded from (addresses lowercase,
 *   uints decimal strings, bytes hex), keyed by chain id and transaction hash.
 * - `walletTransactions` / `contractEvents`: the list operations with a parsed query
 *   (`parseTransactionsQuery` / `parseEventsQuery` parse a query string the way the routes do).
 * - `resolve`, `decode`, `nftHoldings`, `nftCollectionsPage`: the other operations.
 */
/**
 * What the HTTP routes answer from: the five operations of the read interface. Implemented by the
 * seeded data set (SandboxData) and by the data loaded from a JSON-RPC node (src/sandbox/rpc).
 */
export interface ReadInterfaceSource {
  parseTransactionsQuery(params: URLSearchParams | string): ListQuery;
  parseEventsQuery(params: URLSearchParams | string): ListQuery;
  walletTransactions(wallet: string, query: ListQuery, opts?: ListOptions): ListResult<TransactionRecord>;
  contractEvents(contract: string, signature: string, query: ListQuery, opts?: ListOptions): ListResult<EventRecord>;
  resolve(input: string, chainIds?: number[] | null): { meta: ResponseMeta; data: ResolveData };
  decode(contract: string, body: unknown, chainIds?: number[] | null): DecodeResponse;
  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage;
}

export interface SandboxData extends ReadInterfaceSource {
  readonly seed: number;
  readonly transactionTotal: number;
  readonly chains: ChainInfo[];
  readonly wallets: WalletInfo[];
  readonly contracts: ContractInfo[];
  chain(chainId: number): ChainInfo | undefined;
  /** A wallet by address (any case) or name. */
  wallet(addressOrName: string): WalletInfo | undefined;
  contract(address: string): ContractInfo | undefined;
  transactions(chainId: number): IterableIterator<TransactionRecord>;
  logs(chainId: number): IterableIterator<EventRecord>;
  transaction(chainId: number, hash: string): TransactionRecord | null;
  block(chainId: number, blockNumber: number): BlockRecord | null;
  transactionArgs(chainId: number, hash: string): EncodedArgs | null;
  logArgs(chainId: number, transactionHash: string): EncodedArgs | null;
  parseTransactionsQuery(params: URLSearchParams | string): ListQuery;
  parseEventsQuery(params: URLSearchParams | string): ListQuery;
  walletTransactions(wallet: string, query: ListQuery, opts?: ListOptions): ListResult<TransactionRecord>;
  /** Every matching row (no paging, per-chain order), for tests. */
  allWalletTransactions(wallet: string, query: ListQuery, opts?: ListOptions): TransactionRecord[];
  contractEvents(contract: string, signature: string, query: ListQuery, opts?: ListOptions): ListResult<EventRecord>;
  allContractEvents(contract: string, signature: string, query: ListQuery): EventRecord[];
  resolve(input: string, chainIds?: number[] | null): { meta: ResponseMeta; data: ResolveData };
  decode(contract: string, body: unknown, chainIds?: number[] | null): DecodeResponse;
  nftHoldings(address: string, chainId?: number): NftHolding[];
  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage;
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const SELECTOR_RE = /^0x[0-9a-fA-F]{8}$/;
const NAME_RE = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.eth$/i;
const NFT_TYPES: Record<string, ContractKind> = { 'ERC-721': 'erc721', 'ERC-1155': 'erc1155' };
const TYPE_OF_KIND: Partial<Record<ContractKind, string>> = { erc721: 'ERC-721', erc1155: 'ERC-1155' };
const STYLES: BytesStyle[] = ['hex', 'base64', 'array'];
const RESOLVE_LIMIT = 20;

function toParams(p: URLSearchParams | string): URLSearchParams {
  return typeof p === 'string' ? new URLSearchParams(p) : p;
}

class SandboxDataset extends SandboxDataImpl implements SandboxData {
  readonly transactionTotal: number;
  private chainInfos: ChainInfo[];

  constructor(opts: BuildOptions) {
    super(opts);
    this.transactionTotal = this.chainStates.reduce((a, c) => a + c.n, 0);
    this.chainInfos = this.chainStates.map((c) => ({
      chainId: c.chainId,
      name: c.spec.name,
      blockTimeSeconds: c.spec.blockTimeSeconds,
      firstBlock: c.spec.firstBlock,
      firstTimestamp: c.blockTimestampOf(0),
      headBlock: c.spec.firstBlock + c.headOff,
      headTimestamp: c.blockTimestampOf(c.headOff),
      transactionCount: c.n,
      logCount: c.logCount,
    }));
  }

  get chains(): ChainInfo[] {
    return this.chainInfos;
  }
  chain(chainId: number): ChainInfo | undefined {
    return this.chainInfos.find((c) => c.chainId === chainId);
  }
  wallet(addressOrName: string): WalletInfo | undefined {
    const byName = this.walletByName.get(addressOrName.toLowerCase());
    if (byName !== undefined) return this.wallets[byName];
    const actor = this.actorByAddress.get(addressOrName.toLowerCase());
    return actor !== undefined && actor < this.walletCount ? this.wallets[actor] : undefined;
  }
  contract(address: string): ContractInfo | undefined {
    const actor = this.actorByAddress.get(address.toLowerCase());
    return actor !== undefined && actor >= this.walletCount ? this.contracts[actor - this.walletCount] : undefined;
  }
  *transactions(chainId: number): IterableIterator<TransactionRecord> {
    const c = this.chainState(chainId);
    if (!c) return;
    for (let i = 0; i < c.n; i++) yield this.transactionRecord(c, i);
  }
  *logs(chainId: number): IterableIterator<EventRecord> {
    const c = this.chainState(chainId);
    if (!c) return;
    for (let i = 0; i < c.n; i++) if (c.hasLog(i)) yield this.eventRecord(c, i);
  }
  private rowOf(chainId: number, hash: string): { c: ChainState; row: number } | null {
    const c = this.chainState(chainId);
    if (!c || !HASH_RE.test(hash)) return null;
    const row = c.rowOfHash(hash.toLowerCase());
    return row < 0 ? null : { c, row };
  }
  transaction(chainId: number, hash: string): TransactionRecord | null {
    const r = this.rowOf(chainId, hash);
    return r ? this.transactionRecord(r.c, r.row) : null;
  }
  block(chainId: number, blockNumber: number): BlockRecord | null {
    const c = this.chainState(chainId);
    if (!c) return null;
    const off = blockNumber - c.spec.firstBlock;
    if (!Number.isInteger(off) || off < 0 || off > c.headOff) return null;
    return this.blockRecord(c, off);
  }
  transactionArgs(chainId: number, hash: string): EncodedArgs | null {
    const r = this.rowOf(chainId, hash);
    return r ? this.txArgsAt(r.c, r.row) : null;
  }
  logArgs(chainId: number, transactionHash: string): EncodedArgs | null {
    const r = this.rowOf(chainId, transactionHash);
    return r ? this.logArgsAt(r.c, r.row) : null;
  }

  parseTransactionsQuery(params: URLSearchParams | string): ListQuery {
    return parseListQuery(toParams(params), TRANSACTION_COLUMNS);
  }
  parseEventsQuery(params: URLSearchParams | string): ListQuery {
    return parseListQuery(toParams(params), EVENT_COLUMNS);
  }

  private states(chainIds: number[] | null): ChainState[] {
    if (chainIds === null) return this.chainStates;
    return chainIds.map((id) => this.chainState(id)).filter((c): c is ChainState => c !== undefined);
  }
  private metaChainIds(chainIds: number[] | null): number[] {
    return chainIds ?? this.chainStates.map((c) => c.chainId);
  }

  /** Lowercase address of a wallet path parameter (address or known name); 400 otherwise. */
  resolveWalletInput(wallet: string): string {
    if (ADDRESS_RE.test(wallet)) return wallet.toLowerCase();
    const byName = this.walletByName.get(wallet.toLowerCase());
    if (byName !== undefined) return this.wallets[byName]!.address;
    throw badRequest(`invalid wallet address or unknown name: ${wallet}`);
  }

  private walletSources(address: string, query: ListQuery, opts: ListOptions): ChainSource<ChainState>[] {
    const actor = this.actorByAddress.get(address);
    return this.states(query.chainIds).map((c) => ({
      chainId: c.chainId,
      state: c,
      rows: actor === undefined ? new Uint32Array(0) : c.actorRows.subarray(c.actorOffsets[actor]!, c.actorOffsets[actor + 1]!),
      duplicate: opts.duplicateSelfTransfers ? (row: number) => c.from[row] === c.to[row] : undefined,
    }));
  }

  private eventSources(address: string, topic0: string, query: ListQuery): ChainSource<ChainState>[] {
    const actor = this.actorByAddress.get(address);
    const kind = actor === undefined ? null : this.contractKind(actor);
    return this.states(query.chainIds).map((c) => {
      const slot = actor === undefined ? undefined : c.contractSlot.get(actor);
      let eventSlot = -1;
      if (slot !== undefined && kind) {
        if (kind === 'erc20') eventSlot = topic0 === TOPIC0.Transfer ? 0 : topic0 === TOPIC0.Approval ? 1 : -1;
        else if (kind === 'erc721') eventSlot = topic0 === TOPIC0.Transfer ? 0 : -1;
        else if (kind === 'erc1155') eventSlot = topic0 === TOPIC0.TransferSingle ? 0 : -1;
        else eventSlot = topic0 === TOPIC0.SandboxPing ? 0 : -1;
      }
      const key = slot === undefined || eventSlot < 0 ? -1 : slot * 2 + eventSlot;
      return {
        chainId: c.chainId,
        state: c,
        rows: key < 0 ? new Uint32Array(0) : c.eventRows.subarray(c.eventOffsets[key]!, c.eventOffsets[key + 1]!),
      };
    });
  }

  private style(c: ChainState, row: number, opts: ListOptions): BytesStyle {
    return opts.decodedVariants ? STYLES[hash3(c.key, row, 0x5717) % 3]! : 'hex';
  }

  private meta(query: ListQuery, items: number, extra: Partial<ResponseMeta>): ResponseMeta {
    return {
      chain_ids: this.metaChainIds(query.chainIds),
      page: query.page,
      limit_per_chain: query.limit,
      total_items: items,
      total_pages: 0,
      ...extra,
    };
  }

  walletTransactions(wallet: string, query: ListQuery, opts: ListOptions = {}): ListResult<TransactionRecord> {
    const address = this.resolveWalletInput(wallet);
    const sources = this.walletSources(address, query, opts);
    if (query.groupBy.length > 0 || query.aggregates.length > 0) {
      const aggregations = aggregate(sources, query, TRANSACTION_COLUMNS);
      return { meta: this.meta(query, aggregations.length, { address }), aggregations };
    }
    const rows = selectPage(sources, query, TRANSACTION_COLUMNS);
    return {
      meta: this.meta(query, rows.length, { address }),
      data: rows.map((r) => this.txWithDecode(r, query, opts)),
      rowKeys: rows.map((r) => r.row),
    };
  }

  allWalletTransactions(wallet: string, query: ListQuery, opts: ListOptions = {}): TransactionRecord[] {
    const address = this.resolveWalletInput(wallet);
    return selectAll(this.walletSources(address, query, opts), query, TRANSACTION_COLUMNS).map((r) => this.transactionRecord(r.state, r.row));
  }

  private txWithDecode(r: SelectedRow<ChainState>, query: ListQuery, opts: ListOptions): TransactionRecord {
    const rec = this.transactionRecord(r.state, r.row);
    if (query.decode) rec.decoded = this.decodeTransaction(r.state, r.row, this.style(r.state, r.row, opts));
    return rec;
  }

  private eventsPrelude(contract: string, signature: string) {
    if (!ADDRESS_RE.test(contract)) throw badRequest(`invalid contract address: ${contract}`);
    return { address: contract.toLowerCase(), sig: parseEventSignature(signature) };
  }

  contractEvents(contract: string, signature: string, query: ListQuery, opts: ListOptions = {}): ListResult<EventRecord> {
    const { address, sig } = this.eventsPrelude(contract, signature);
    const sources = this.eventSources(address, sig.topic0, query);
    const extra = { address, signature: sig.topic0 };
    if (query.groupBy.length > 0 || query.aggregates.length > 0) {
      const aggregations = aggregate(sources, query, EVENT_COLUMNS);
      return { meta: this.meta(query, aggregations.length, extra), aggregations };
    }
    const rows = selectPage(sources, query, EVENT_COLUMNS);
    return {
      meta: this.meta(query, rows.length, extra),
      data: rows.map((r) => {
        const rec = this.eventRecord(r.state, r.row);
        if (query.decode) rec.decoded = this.decodeEvent(r.state, r.row, sig, this.style(r.state, r.row, opts));
        return rec;
      }),
      rowKeys: rows.map((r) => r.row),
    };
  }

  allContractEvents(contract: string, signature: string, query: ListQuery): EventRecord[] {
    const { address, sig } = this.eventsPrelude(contract, signature);
    return selectAll(this.eventSources(address, sig.topic0, query), query, EVENT_COLUMNS).map((r) => this.eventRecord(r.state, r.row));
  }

  // ---------------------------------------------------------------- resolve

  resolve(input: string, chainIds: number[] | null = null): { meta: ResponseMeta; data: ResolveData } {
    const states = this.states(chainIds);
    const data: ResolveData = { type: 'unknown', blocks: [], transactions: [], events: [], address: null };
    const text = input.trim();
    if (/^\d+$/.test(text)) {
      const bn = Number(text);
      for (const c of states) {
        const off = bn - c.spec.firstBlock;
        if (off >= 0 && off <= c.headOff) data.blocks.push(this.blockRecord(c, off));
      }
      data.type = 'block';
    } else if (HASH_RE.test(text)) {
      const hash = text.toLowerCase();
      for (const c of states) {
        const row = c.rowOfHash(hash);
        if (row >= 0) {
          data.type = 'transaction';
          data.transactions.push(this.transactionRecord(c, row));
          if (c.hasLog(row)) data.events.push(this.eventRecord(c, row));
        }
      }
      if (data.type === 'unknown') {
        for (const c of states) {
          const off = c.blockOffOfHash(hash);
          if (off >= 0) {
            data.type = 'block';
            data.blocks.push(this.blockRecord(c, off));
          }
        }
      }
      if (data.type === 'unknown' && (Object.values(TOPIC0) as string[]).includes(hash)) {
        data.type = 'event_signature';
        data.events = this.latest(states, (c, row) => c.hasLog(row) && c.topic(row, 0) === hash).map(({ c, row }) => this.eventRecord(c, row));
      }
    } else if (ADDRESS_RE.test(text)) {
      const address = text.toLowerCase();
      data.address = address;
      const actor = this.actorByAddress.get(address);
      if (actor !== undefined && actor >= this.walletCount) {
        data.type = 'contract';
        const txs: { c: ChainState; row: number }[] = [];
        for (const c of states) {
          const rows = c.actorRows.subarray(c.actorOffsets[actor]!, c.actorOffsets[actor + 1]!);
          for (let k = rows.length - 1; k >= 0 && k >= rows.length - RESOLVE_LIMIT; k--) txs.push({ c, row: rows[k]! });
        }
        txs.sort((a, b) => b.c.blockTimestamp(b.row) - a.c.blockTimestamp(a.row));
        data.transactions = txs.slice(0, RESOLVE_LIMIT).map(({ c, row }) => this.transactionRecord(c, row));
      } else {
        data.type = 'address';
      }
    } else if (SELECTOR_RE.test(text)) {
      const selector = text.toLowerCase();
      data.type = 'function_signature';
      data.transactions = this.latest(states, (c, row) => c.functionSelector(row) === selector).map(({ c, row }) => this.transactionRecord(c, row));
    } else if (NAME_RE.test(text) && this.walletByName.has(text.toLowerCase())) {
      data.type = 'address';
      data.address = this.wallets[this.walletByName.get(text.toLowerCase())!]!.address;
    } else {
      throw badRequest(`cannot resolve input: ${input}`, 'expected a block number, a 0x hash, an address, a 4-byte selector or a known name');
    }
    const items = data.blocks.length + data.transactions.length + data.events.length + (data.address ? 1 : 0);
    return {
      meta: { chain_ids: this.metaChainIds(chainIds), page: 0, limit_per_chain: 0, total_items: items, total_pages: 0 },
      data,
    };
  }

  /** Newest rows matching `pred` (at most RESOLVE_LIMIT per chain, newest first), scanning a bounded tail. */
  private latest(states: ChainState[], pred: (c: ChainState, row: number) => boolean): { c: ChainState; row: number }[] {
    const out: { c: ChainState; row: number }[] = [];
    for (const c of states) {
      let found = 0;
      for (let row = c.n - 1; row >= 0 && row >= c.n - 200_000 && found < RESOLVE_LIMIT; row--) {
        if (pred(c, row)) {
          out.push({ c, row });
          found++;
        }
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- decode

  decode(contract: string, body: unknown, chainIds: number[] | null = null): DecodeResponse {
    if (!ADDRESS_RE.test(contract)) throw badRequest(`invalid contract address: ${contract}`);
    const info = this.contract(contract);
    if (!info || info.kind === 'unknown' || (chainIds !== null && !chainIds.includes(info.chainId))) {
      throw new SandboxHttpError(404, `no ABI found for contract ${contract.toLowerCase()}`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('decode body must be a JSON object');
    const b = body as { transactions?: unknown; logs?: unknown };
    const txs = b.transactions ?? [];
    const logs = b.logs ?? [];
    if (!Array.isArray(txs) || !Array.isArray(logs)) throw badRequest('decode body: transactions and logs must be arrays');
    const out: DecodeResponse = { data: { transactions: [], logs: [] } };
    txs.forEach((t: unknown, i) => {
      const data = (t as { data?: unknown } | null)?.data;
      if (typeof data !== 'string') throw badRequest(`decode body: transactions[${i}].data must be a hex string`);
      const abi = ABI_BY_KIND[info.kind];
      const d = abi ? decodeCallWithAbi(abi, data, 'hex') : null;
      out.data.transactions.push({ data, function_name: d?.name ?? null, args: d?.args ?? [] });
    });
    logs.forEach((l: unknown, i) => {
      const log = l as { topics?: unknown; data?: unknown } | null;
      if (!Array.isArray(log?.topics) || !log.topics.every((t) => typeof t === 'string') || typeof log.data !== 'string') {
        throw badRequest(`decode body: logs[${i}] needs topics (array of hex strings) and data (hex string)`);
      }
      const topics = (log.topics as string[]).map((t) => t.toLowerCase());
      const d = this.decodeLogByAbi(info.kind, topics, log.data, 'hex');
      out.data.logs.push({ topics: log.topics as string[], data: log.data, event_name: d?.name ?? null, args: d?.args ?? [] });
    });
    return out;
  }

  // ---------------------------------------------------------------- NFT collections

  private nftStats = new Map<number, Map<number, { holders: number; supply: bigint }>>();

  private statsOf(c: ChainState): Map<number, { holders: number; supply: bigint }> {
    let s = this.nftStats.get(c.chainId);
    if (s) return s;
    s = new Map();
    for (const [, byContract] of this.holdingsOf(c)) {
      for (const [contract, tokens] of byContract) {
        const st = s.get(contract) ?? { holders: 0, supply: 0n };
        st.holders++;
        for (const a of tokens.values()) st.supply += a;
        s.set(contract, st);
      }
    }
    this.nftStats.set(c.chainId, s);
    return s;
  }

  private owner(address: string): NftOwner {
    const w = this.wallet(address);
    return {
      hash: address,
      implementation_name: null,
      name: null,
      is_contract: false,
      is_verified: false,
      ens_domain_name: w?.name ?? null,
      private_tags: [],
      public_tags: [],
      watchlist_names: [],
      metadata: null,
    };
  }

  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage {
    if (!ADDRESS_RE.test(address)) throw badRequest(`invalid address hash: ${address}`);
    const types = (params.types ?? []).filter((t) => t !== '');
    for (const t of types) if (!NFT_TYPES[t] && t !== 'ERC-404') throw badRequest(`invalid type: ${t}`, 'allowed: ERC-721, ERC-404, ERC-1155');
    const kinds = types.length === 0 ? ['erc721', 'erc1155'] : types.map((t) => NFT_TYPES[t]).filter(Boolean);
    const c = params.chainId === undefined ? this.chainStates[0]! : this.chainState(params.chainId);
    if (!c) throw badRequest(`unknown chain_id: ${params.chainId}`);
    const holder = address.toLowerCase();
    const full = this.nftHoldings(holder, c.chainId).filter((h) => kinds.includes(h.contract.kind));
    const after = params.after?.toLowerCase();
    const all = after ? full.filter((h) => h.contract.address > after) : full;
    const before = full.length - all.length;
    const page = all.slice(0, params.pageSize);
    const stats = this.statsOf(c);
    const items: NftCollection[] = page.map((h) => {
      const type = TYPE_OF_KIND[h.contract.kind]!;
      const st = stats.get(this.actorByAddress.get(h.contract.address)!);
      const unique = h.contract.kind === 'erc721';
      return {
        token: {
          circulating_market_cap: null,
          icon_url: null,
          name: h.contract.name,
          decimals: null,
          symbol: h.contract.symbol,
          address: h.contract.address,
          type,
          holders: st ? String(st.holders) : null,
          exchange_rate: null,
          total_supply: st ? st.supply.toString() : null,
        },
        token_instances: h.tokens.map((t) => ({
          is_unique: unique,
          id: t.id,
          owner: unique ? this.owner(holder) : null,
          token_type: type,
          value: t.amount,
          holder_address_hash: holder,
          image_url: nftImage(c.chainId, h.contract.address, t.id),
          animation_url: null,
          external_app_url: null,
          metadata: nftMetadata(c, h.contract, t.id),
          token: null,
        })),
        amount: h.tokens.reduce((a, t) => a + BigInt(t.amount), 0n).toString(),
      };
    });
    const last = page[page.length - 1];
    return {
      items,
      next_page_params:
        all.length > params.pageSize && last
          ? {
              token_contract_address_hash: last.contract.address,
              token_type: TYPE_OF_KIND[last.contract.kind]!,
              items_count: before + page.length,
            }
          : null,
    };
  }
}


const TRAITS = ['Red', 'Blue', 'Green', 'Gold', 'Silver', 'Black'];
const RARITY = ['common', 'uncommon', 'rare', 'epic', 'legendary'];

function nftImage(chainId: number, contract: string, id: string): string {
  return `https://nft.sandbox.invalid/${chainId}/${contract}/${id}.png`;
}

function nftMetadata(c: ChainState, contract: ContractInfo, id: string): Record<string, unknown> {
  const h = hash3(c.key, parseInt(contract.address.slice(2, 10), 16), Number(id));
  return {
    name: `${contract.name} #${id}`,
    description: `Token ${id} of ${contract.name} on ${c.spec.name} (sandbox data).`,
    image_url: nftImage(c.chainId, contract.address, id),
    attributes: [
      { trait_type: 'Background', value: TRAITS[h % TRAITS.length] },
      { trait_type: 'Rarity', value: RARITY[(h >>> 8) % RARITY.length] },
      { trait_type: 'Level', value: 1 + ((h >>> 16) % 50) },
    ],
  };
}

/** Builds the deterministic data set (same seed and size => identical data). */
export function buildSandboxData(opts: BuildOptions = {}): SandboxData {
  return new SandboxDataset(opts);
}

export type { SandboxDataset };
export { ChainState };
