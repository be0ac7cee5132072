import type {
  DecodeResponse,
  DecodedEvent,
  DecodedTransaction,
  EventRecord,
  NftCollection,
  NftCollectionsPage,
  ResolveData,
  ResponseMeta,
  TransactionRecord,
} from '../../source/records.js';
import { decodeLogWith, parseEventSignature, type BytesStyle, type ContractKind, type ParsedEventSignature } from '../abi.js';
import type { ListOptions, ListResult, NftPageParams, ReadInterfaceSource } from '../data.js';
import { SandboxHttpError, badRequest } from '../errors.js';
import { hash3 } from '../prng.js';
import { aggregate, parseListQuery, selectAll, selectPage, type ChainSource, type ListQuery, type SelectedRow } from '../query.js';
import type { AbiRegistry } from './registry.js';
import { RPC_EVENT_COLUMNS, RPC_TRANSACTION_COLUMNS, type ChainStore } from './store.js';

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
const SELECTOR_RE = /^0x[0-9a-fA-F]{8}$/;
const RESOLVE_LIMIT = 20;
const STYLES: BytesStyle[] = ['hex', 'base64', 'array'];
const NFT_TYPES: Record<string, ContractKind> = { 'ERC-721': 'erc721', 'ERC-1155': 'erc1155' };
const TYPE_OF_KIND: Partial<Record<ContractKind, string>> = { erc721: 'ERC-721', erc1155: 'ERC-1155' };

/** A chain the sandbox loaded from a node. */
export interface RpcChainInfo {
  chainId: number;
  rpcUrl: string;
  /** null until the first block is loaded. */
  firstBlock: number | null;
  headBlock: number | null;
  headHash: string | null;
  headTimestamp: number | null;
  transactionCount: number;
  logCount: number;
  /** Blocks replaced because the node reorganised them. */
  reorgedBlocks: number;
}

function toParams(p: URLSearchParams | string): URLSearchParams {
  return typeof p === 'string' ? new URLSearchParams(p) : p;
}

/**
 * The read interface over chains loaded from JSON-RPC nodes. Filters, sort, per-chain limit, the
 * page cap and group_by/aggregate are the seeded sandbox's query engine (query.ts) over the stored
 * records; decoding uses the ABI registry (standard token ABIs plus ABI files).
 */
export class RpcSandboxData implements ReadInterfaceSource {
  constructor(
    readonly stores: readonly ChainStore[],
    readonly registry: AbiRegistry,
  ) {}

  get chains(): RpcChainInfo[] {
    return this.stores.map((s) => ({
      chainId: s.chainId,
      rpcUrl: s.rpcUrl,
      firstBlock: s.firstBlock,
      headBlock: s.head?.block_number ?? null,
      headHash: s.head?.block_hash ?? null,
      headTimestamp: s.head?.block_timestamp ?? null,
      transactionCount: s.txs.length,
      logCount: s.logs.length,
      reorgedBlocks: s.reorgedBlocks,
    }));
  }

  store(chainId: number): ChainStore | undefined {
    return this.stores.find((s) => s.chainId === chainId);
  }

  /** The standard a contract's logs show on any of the chains. */
  kindOf(address: string, chainIds: number[] | null = null): ContractKind | null {
    for (const s of this.select(chainIds)) {
      const k = s.kindOf(address);
      if (k) return k;
    }
    return null;
  }

  parseTransactionsQuery(params: URLSearchParams | string): ListQuery {
    return parseListQuery(toParams(params), RPC_TRANSACTION_COLUMNS);
  }
  parseEventsQuery(params: URLSearchParams | string): ListQuery {
    return parseListQuery(toParams(params), RPC_EVENT_COLUMNS);
  }

  private select(chainIds: number[] | null): ChainStore[] {
    if (chainIds === null) return [...this.stores];
    return chainIds.map((id) => this.store(id)).filter((s): s is ChainStore => s !== undefined);
  }

  private meta(query: ListQuery, items: number, extra: Partial<ResponseMeta>): ResponseMeta {
    return {
      chain_ids: query.chainIds ?? this.stores.map((s) => s.chainId),
      page: query.page,
      limit_per_chain: query.limit,
      total_items: items,
      total_pages: 0,
      ...extra,
    };
  }

  private style(s: ChainStore, row: number, opts: ListOptions): BytesStyle {
    return opts.decodedVariants ? STYLES[hash3(s.chainId, row, 0x5717) % 3]! : 'hex';
  }

  private walletAddress(wallet: string): string {
    if (ADDRESS_RE.test(wallet)) return wallet.toLowerCase();
    throw badRequest(`invalid wallet address: ${wallet}`, 'a chain loaded over JSON-RPC has no names: give the 0x address');
  }

  private walletSources(address: string, query: ListQuery, opts: ListOptions): ChainSource<ChainStore>[] {
    return this.select(query.chainIds).map((s) => ({
      chainId: s.chainId,
      state: s,
      rows: s.walletRowsOf(address),
      duplicate: opts.duplicateSelfTransfers ? (row: number) => s.txs[row]!.from_address === s.txs[row]!.to_address : undefined,
    }));
  }

  decodeTransaction(s: ChainStore, tx: TransactionRecord, style: BytesStyle = 'hex'): DecodedTransaction | null {
    if (tx.to_address === null) return null;
    const d = this.registry.decodeCall(tx.to_address, s.kindOf(tx.to_address), tx.data, style);
    return d ? { name: d.name, signature: d.signature, inputs: d.inputs } : null;
  }

  /** `decoded` of the events route: the request's signature, for contracts whose ABI knows the event. */
  decodeEvent(s: ChainStore, log: EventRecord, sig: ParsedEventSignature, style: BytesStyle = 'hex'): DecodedEvent | null {
    if (!this.registry.knowsEvent(log.address, s.kindOf(log.address), sig.topic0)) return null;
    const d = decodeLogWith(sig.item, sig.canonical, log.topics, log.data, style);
    return d ? { name: d.name, signature: d.signature, indexed_params: d.indexed_params, non_indexed_params: d.non_indexed_params } : null;
  }

  walletTransactions(wallet: string, query: ListQuery, opts: ListOptions = {}): ListResult<TransactionRecord> {
    const address = this.walletAddress(wallet);
    const sources = this.walletSources(address, query, opts);
    if (query.groupBy.length > 0 || query.aggregates.length > 0) {
      const aggregations = aggregate(sources, query, RPC_TRANSACTION_COLUMNS);
      return { meta: this.meta(query, aggregations.length, { address }), aggregations };
    }
    const rows = selectPage(sources, query, RPC_TRANSACTION_COLUMNS);
    return {
      meta: this.meta(query, rows.length, { address }),
      data: rows.map((r) => {
        const tx = r.state.txs[r.row]!;
        return query.decode ? { ...tx, decoded: this.decodeTransaction(r.state, tx, this.style(r.state, r.row, opts)) } : { ...tx };
      }),
      rowKeys: rows.map((r) => r.row),
    };
  }

  /** Every matching row (no paging), for tests. */
  allWalletTransactions(wallet: string, query: ListQuery): TransactionRecord[] {
    const address = this.walletAddress(wallet);
    return selectAll(this.walletSources(address, query, {}), query, RPC_TRANSACTION_COLUMNS).map((r) => ({ ...r.state.txs[r.row]! }));
  }

  private eventSources(contract: string, signature: string, query: ListQuery) {
    if (!ADDRESS_RE.test(contract)) throw badRequest(`invalid contract address: ${contract}`);
    const address = contract.toLowerCase();
    const sig = parseEventSignature(signature);
    const sources: ChainSource<ChainStore>[] = this.select(query.chainIds).map((s) => ({
      chainId: s.chainId,
      state: s,
      rows: s.eventRowsOf(address, sig.topic0),
    }));
    return { address, sig, sources };
  }

  contractEvents(contract: string, signature: string, query: ListQuery, opts: ListOptions = {}): ListResult<EventRecord> {
    const { address, sig, sources } = this.eventSources(contract, signature, query);
    const extra = { address, signature: sig.topic0 };
    if (query.groupBy.length > 0 || query.aggregates.length > 0) {
      const aggregations = aggregate(sources, query, RPC_EVENT_COLUMNS);
      return { meta: this.meta(query, aggregations.length, extra), aggregations };
    }
    const rows = selectPage(sources, query, RPC_EVENT_COLUMNS);
    return {
      meta: this.meta(query, rows.length, extra),
      data: rows.map((r) => {
        const log = r.state.logs[r.row]!;
        return query.decode ? { ...log, decoded: this.decodeEvent(r.state, log, sig, this.style(r.state, r.row, opts)) } : { ...log };
      }),
      rowKeys: rows.map((r) => r.row),
    };
  }

  allContractEvents(contract: string, signature: string, query: ListQuery): EventRecord[] {
    const { sources } = this.eventSources(contract, signature, query);
    return selectAll(sources, query, RPC_EVENT_COLUMNS).map((r: SelectedRow<ChainStore>) => ({ ...r.state.logs[r.row]! }));
  }

  // ---------------------------------------------------------------- resolve

  resolve(input: string, chainIds: number[] | null = null): { meta: ResponseMeta; data: ResolveData } {
    const stores = this.select(chainIds);
    const data: ResolveData = { type: 'unknown', blocks: [], transactions: [], events: [], address: null };
    const text = input.trim();
    if (/^\d+$/.test(text)) {
      data.type = 'block';
      for (const s of stores) {
        const b = s.blockAt(Number(text));
        if (b) data.blocks.push({ ...b });
      }
    } else if (HASH_RE.test(text)) {
      const hash = text.toLowerCase();
      for (const s of stores) {
        const row = s.txRowOfHash(hash);
        if (row >= 0) {
          data.type = 'transaction';
          data.transactions.push({ ...s.txs[row]! });
          data.events.push(...s.logsOfTx(hash).map((l) => ({ ...l })));
        }
      }
      if (data.type === 'unknown') {
        for (const s of stores) {
          const b = s.blockOfHash(hash);
          if (b) {
            data.type = 'block';
            data.blocks.push({ ...b });
          }
        }
      }
      if (data.type === 'unknown') {
        const events = this.latest(stores, (s) => s.logs, (l) => l.topics[0] === hash);
        if (events.length > 0) {
          data.type = 'event_signature';
          data.events = events;
        }
      }
    } else if (ADDRESS_RE.test(text)) {
      const address = text.toLowerCase();
      data.address = address;
      const isContract = stores.some((s) => s.isContract(address));
      data.type = isContract ? 'contract' : 'address';
      if (isContract) {
        const txs: TransactionRecord[] = [];
        for (const s of stores) {
          const rows = s.walletRowsOf(address);
          for (let k = rows.length - 1; k >= 0 && k >= rows.length - RESOLVE_LIMIT; k--) txs.push({ ...s.txs[rows[k]!]! });
        }
        txs.sort((a, b) => b.block_timestamp - a.block_timestamp);
        data.transactions = txs.slice(0, RESOLVE_LIMIT);
      }
    } else if (SELECTOR_RE.test(text)) {
      const selector = text.toLowerCase();
      data.type = 'function_signature';
      data.transactions = this.latest(stores, (s) => s.txs, (t) => t.function_selector === selector);
    } else {
      throw badRequest(`cannot resolve input: ${input}`, 'expected a block number, a 0x hash, an address or a 4-byte selector (a chain loaded over JSON-RPC has no names)');
    }
    const items = data.blocks.length + data.transactions.length + data.events.length + (data.address ? 1 : 0);
    return {
      meta: { chain_ids: chainIds ?? this.stores.map((s) => s.chainId), page: 0, limit_per_chain: 0, total_items: items, total_pages: 0 },
      data,
    };
  }

  /** Newest rows matching `pred`, at most RESOLVE_LIMIT per chain, newest first. */
  private latest<T>(stores: ChainStore[], rowsOf: (s: ChainStore) => readonly T[], pred: (row: T) => boolean): T[] {
    const out: T[] = [];
    for (const s of stores) {
      const rows = rowsOf(s);
      let found = 0;
      for (let i = rows.length - 1; i >= 0 && found < RESOLVE_LIMIT; i--) {
        if (pred(rows[i]!)) {
          out.push({ ...rows[i]! });
          found++;
        }
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- decode

  decode(contract: string, body: unknown, chainIds: number[] | null = null): DecodeResponse {
    if (!ADDRESS_RE.test(contract)) throw badRequest(`invalid contract address: ${contract}`);
    const address = contract.toLowerCase();
    const kind = this.kindOf(address, chainIds);
    if (!this.registry.hasAbi(address, kind)) throw new SandboxHttpError(404, `no ABI found for contract ${address}`);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('decode body must be a JSON object');
    const b = body as { transactions?: unknown; logs?: unknown };
    const txs = b.transactions ?? [];
    const logs = b.logs ?? [];
    if (!Array.isArray(txs) || !Array.isArray(logs)) throw badRequest('decode body: transactions and logs must be arrays');
    const out: DecodeResponse = { data: { transactions: [], logs: [] } };
    txs.forEach((t: unknown, i) => {
      const data = (t as { data?: unknown } | null)?.data;
      if (typeof data !== 'string') throw badRequest(`decode body: transactions[${i}].data must be a hex string`);
      const d = this.registry.decodeCall(address, kind, data, 'hex');
      out.data.transactions.push({ data, function_name: d?.name ?? null, args: d?.args ?? [] });
    });
    logs.forEach((l: unknown, i) => {
      const log = l as { topics?: unknown; data?: unknown } | null;
      if (!Array.isArray(log?.topics) || !log.topics.every((t) => typeof t === 'string') || typeof log.data !== 'string') {
        throw badRequest(`decode body: logs[${i}] needs topics (array of hex strings) and data (hex string)`);
      }
      const topics = (log.topics as string[]).map((t) => t.toLowerCase());
      const d = this.registry.decodeLog(address, kind, topics, log.data, 'hex');
      out.data.logs.push({ topics: log.topics as string[], data: log.data, event_name: d?.name ?? null, args: d?.args ?? [] });
    });
    return out;
  }

  // ---------------------------------------------------------------- NFT collections

  /**
   * NFT holdings derived from the chain's ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch
   * logs; token name/symbol as the contract answered them (no images or metadata: a node has none).
   */
  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage {
    if (!ADDRESS_RE.test(address)) throw badRequest(`invalid address hash: ${address}`);
    const types = (params.types ?? []).filter((t) => t !== '');
    for (const t of types) if (!NFT_TYPES[t] && t !== 'ERC-404') throw badRequest(`invalid type: ${t}`, 'allowed: ERC-721, ERC-404, ERC-1155');
    const kinds = types.length === 0 ? ['erc721', 'erc1155'] : types.map((t) => NFT_TYPES[t]).filter(Boolean);
    const s = params.chainId === undefined ? this.stores[0] : this.store(params.chainId);
    if (!s) throw badRequest(`unknown chain_id: ${params.chainId}`);
    const holder = address.toLowerCase();
    const holdings = s.holdings();
    const mine = holdings.get(holder) ?? new Map<string, Map<string, bigint>>();
    const full = [...mine.entries()]
      .map(([contract, tokens]) => ({ contract, kind: s.kindOf(contract), tokens }))
      .filter((h) => h.kind !== null && kinds.includes(h.kind))
      .sort((a, b) => (a.contract < b.contract ? -1 : 1));
    const after = params.after?.toLowerCase();
    const all = after ? full.filter((h) => h.contract > after) : full;
    const before = full.length - all.length;
    const page = all.slice(0, params.pageSize);
    const items: NftCollection[] = page.map((h) => {
      const type = TYPE_OF_KIND[h.kind!]!;
      const info = s.tokenInfo.get(h.contract);
      let holders = 0;
      let supply = 0n;
      for (const byContract of holdings.values()) {
        const t = byContract.get(h.contract);
        if (!t) continue;
        holders++;
        for (const a of t.values()) supply += a;
      }
      const unique = h.kind === 'erc721';
      const ids = [...h.tokens.entries()].sort((a, b) => (BigInt(a[0]) < BigInt(b[0]) ? -1 : 1));
      return {
        token: {
          circulating_market_cap: null,
          icon_url: null,
          name: info?.name ?? null,
          decimals: info?.decimals === null || info?.decimals === undefined ? null : String(info.decimals),
          symbol: info?.symbol ?? null,
          address: h.contract,
          type,
          holders: String(holders),
          exchange_rate: null,
          total_supply: supply.toString(),
        },
        token_instances: ids.map(([id, amount]) => ({
          is_unique: unique,
          id,
          owner: unique
            ? {
                hash: holder,
                implementation_name: null,
                name: null,
                is_contract: s.isContract(holder),
                is_verified: false,
                ens_domain_name: null,
                private_tags: [],
                public_tags: [],
                watchlist_names: [],
                metadata: null,
              }
            : null,
          token_type: type,
          value: amount.toString(),
          holder_address_hash: holder,
          image_url: null,
          animation_url: null,
          external_app_url: null,
          metadata: null,
          token: null,
        })),
        amount: ids.reduce((a, [, v]) => a + v, 0n).toString(),
      };
    });
    const last = page[page.length - 1];
    return {
      items,
      next_page_params:
        all.length > params.pageSize && last
          ? { token_contract_address_hash: last.contract, token_type: TYPE_OF_KIND[last.kind!]!, items_count: before + page.length }
          : null,
    };
  }
}
