import type {
  DecodeResponse,
  DecodedEvent,
  DecodedTransaction,
  EventRecord,
  NftCollectionsPage,
  ResolveData,
  ResponseMeta,
  TransactionRecord,
} from '../../../../src/shared-with-sandbox.js';
import { decodeLogWith, parseEventSignature, type BytesStyle, type ContractKind, type ParsedEventSignature } from '../abi.js';
import type { ListOptions, ListResult, NftPageParams, ReadInterfaceSource } from '../data.js';
import { decodeAnswer } from '../decode-answer.js';
import { SandboxHttpError, badRequest } from '../errors.js';
import { decodedStyle, listAnswer } from '../list-answer.js';
import {
  nftCollection,
  nftCollectionsPage,
  nftInstancesPage,
  nftOwner,
  type HeldCollection,
  type NftHoldingsSource,
  type NftInstancesPage,
} from '../nft-collections-page.js';
import { parseListQuery, type ListQuery, type PagingRules } from '../query.js';
import { selectAll, type ChainSource, type SelectedRow } from '../query-select.js';
import { ADDRESS_RE, contractAddress, toParams } from '../request-inputs.js';
import { RESOLVE_LIMIT, newestRows, resolveAnswer } from '../resolve-answer.js';
import type { AbiRegistry } from './registry.js';
import { RPC_EVENT_COLUMNS, RPC_TRANSACTION_COLUMNS, type ChainStore } from './store.js';

/** An NFT contract a holder has tokens of on a loaded chain: token id -> amount. */
interface HeldTokens extends HeldCollection {
  tokens: Map<string, bigint>;
}

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

  parseTransactionsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery {
    return parseListQuery(toParams(params), RPC_TRANSACTION_COLUMNS, rules);
  }
  parseEventsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery {
    return parseListQuery(toParams(params), RPC_EVENT_COLUMNS, rules);
  }

  private select(chainIds: number[] | null): ChainStore[] {
    if (chainIds === null) return [...this.stores];
    return chainIds.map((id) => this.store(id)).filter((s): s is ChainStore => s !== undefined);
  }

  private chainIds(): number[] {
    return this.stores.map((s) => s.chainId);
  }

  private style(s: ChainStore, row: number, opts: ListOptions): BytesStyle {
    return decodedStyle(s.chainId, row, opts);
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
      side: { from: (row: number) => s.txs[row]!.from_address === address, to: (row: number) => s.txs[row]!.to_address === address },
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
    return listAnswer(
      sources,
      query,
      RPC_TRANSACTION_COLUMNS,
      this.chainIds(),
      { address },
      (r) => {
        const tx = r.state.txs[r.row]!;
        return query.decode ? { ...tx, decoded: this.decodeTransaction(r.state, tx, this.style(r.state, r.row, opts)) } : { ...tx };
      },
      opts,
    );
  }

  /** Every matching row (no paging), for tests. */
  allWalletTransactions(wallet: string, query: ListQuery): TransactionRecord[] {
    const address = this.walletAddress(wallet);
    return selectAll(this.walletSources(address, query, {}), query, RPC_TRANSACTION_COLUMNS).map((r) => ({ ...r.state.txs[r.row]! }));
  }

  private eventSources(contract: string, signature: string, query: ListQuery) {
    const address = contractAddress(contract);
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
    return listAnswer(
      sources,
      query,
      RPC_EVENT_COLUMNS,
      this.chainIds(),
      { address, signature: sig.topic0 },
      (r) => {
        const log = r.state.logs[r.row]!;
        return query.decode ? { ...log, decoded: this.decodeEvent(r.state, log, sig, this.style(r.state, r.row, opts)) } : { ...log };
      },
      opts,
    );
  }

  allContractEvents(contract: string, signature: string, query: ListQuery): EventRecord[] {
    const { sources } = this.eventSources(contract, signature, query);
    return selectAll(sources, query, RPC_EVENT_COLUMNS).map((r: SelectedRow<ChainStore>) => ({ ...r.state.logs[r.row]! }));
  }

  // ---------------------------------------------------------------- resolve

  resolve(input: string, chainIds: number[] | null = null): { meta: ResponseMeta; data: ResolveData } {
    return resolveAnswer(input, this.select(chainIds), chainIds ?? this.chainIds(), {
      block: (s, bn) => {
        const b = s.blockAt(bn);
        return b ? { ...b } : null;
      },
      transaction: (s, hash) => {
        const row = s.txRowOfHash(hash);
        if (row < 0) return null;
        return { transaction: { ...s.txs[row]! }, events: s.logsOfTx(hash).map((l) => ({ ...l })) };
      },
      blockOfHash: (s, hash) => {
        const b = s.blockOfHash(hash);
        return b ? { ...b } : null;
      },
      eventSignature: (stores, hash) => {
        const events = this.latest(
          stores,
          (s) => s.logs,
          (l) => l.topics[0] === hash,
        );
        return events.length > 0 ? events : null;
      },
      contractTransactions: (stores, address) => {
        if (!stores.some((s) => s.isContract(address))) return null;
        const rows = newestRows(
          stores,
          (s) => s.walletRowsOf(address),
          (s, row) => s.txs[row]!.block_timestamp,
        );
        return rows.map(({ chain, row }) => ({ ...chain.txs[row]! }));
      },
      functionSelector: (stores, selector) =>
        this.latest(
          stores,
          (s) => s.txs,
          (t) => t.function_selector === selector,
        ),
      expected: 'expected a block number, a 0x hash, an address or a 4-byte selector (a chain loaded over JSON-RPC has no names)',
    });
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
    const address = contractAddress(contract);
    const kind = this.kindOf(address, chainIds);
    if (!this.registry.hasAbi(address, kind)) throw new SandboxHttpError(404, `no ABI found for contract ${address}`);
    return decodeAnswer(body, {
      call: (data) => this.registry.decodeCall(address, kind, data, 'hex'),
      log: (topics, data) => this.registry.decodeLog(address, kind, topics, data, 'hex'),
    });
  }

  // ---------------------------------------------------------------- NFT collections

  /**
   * NFT holdings derived from the chain's ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch
   * logs; token name/symbol as the contract answered them (no images or metadata: a node has none).
   */
  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage {
    return nftCollectionsPage(address, params, this.nftSource());
  }

  nftInstancesPage(address: string, params: NftPageParams): NftInstancesPage {
    return nftInstancesPage(address, params, this.nftSource());
  }

  private nftSource(): NftHoldingsSource<ChainStore, HeldTokens> {
    return {
      chain: (chainId) => (chainId === undefined ? this.stores[0] : this.store(chainId)),
      held: (s, holder, kinds) => {
        const mine = s.holdings().get(holder) ?? new Map<string, Map<string, bigint>>();
        return [...mine.entries()]
          .map(([contract, tokens]) => ({ address: contract, kind: s.kindOf(contract), tokens }))
          .filter((h): h is HeldTokens => h.kind !== null && kinds.includes(h.kind))
          .sort((a, b) => (a.address < b.address ? -1 : 1));
      },
      collection: (s, holder, h) => {
        const info = s.tokenInfo.get(h.address);
        let holders = 0;
        let supply = 0n;
        for (const byContract of s.holdings().values()) {
          const t = byContract.get(h.address);
          if (!t) continue;
          holders++;
          for (const a of t.values()) supply += a;
        }
        const facts = {
          address: h.address,
          kind: h.kind,
          name: info?.name ?? null,
          symbol: info?.symbol ?? null,
          decimals: info?.decimals === null || info?.decimals === undefined ? null : String(info.decimals),
          holders: String(holders),
          totalSupply: supply.toString(),
        };
        const tokens = [...h.tokens.entries()]
          .sort((a, b) => (BigInt(a[0]) < BigInt(b[0]) ? -1 : 1))
          .map(([id, amount]) => ({ id, amount: amount.toString(), imageUrl: null, metadata: null }));
        return nftCollection(facts, holder, tokens, () => nftOwner(holder, s.isContract(holder), null));
      },
    };
  }
}
