import type {
  BlockRecord,
  DecodeResponse,
  EventRecord,
  NftCollectionsPage,
  ResolveData,
  ResponseMeta,
  TransactionRecord,
} from '../../../src/shared-with-sandbox.js';
import { ABI_BY_KIND, TOPIC0, decodeCallWithAbi, parseEventSignature, type BytesStyle } from './abi.js';
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
import { nftTokens } from './nft-metadata.js';
import { decodeAnswer } from './decode-answer.js';
import { decodedStyle, listAnswer, type ListOptions, type ListResult } from './list-answer.js';
import {
  nftCollection,
  nftCollectionsPage,
  nftInstancesPage,
  nftOwner,
  type HeldCollection,
  type NftHoldingsSource,
  type NftInstancesPage,
  type NftPageParams,
} from './nft-collections-page.js';
import { parseListQuery, type ListQuery, type PagingRules } from './query.js';
import { selectAll, type ChainSource, type SelectedRow } from './query-select.js';
import { ADDRESS_RE, HASH_RE, contractAddress, toParams } from './request-inputs.js';
import { RESOLVE_LIMIT, newestRows, resolveAnswer } from './resolve-answer.js';

export type { ChainInfo, ContractInfo, EncodedArgs, NftHolding, WalletInfo } from './dataset.js';
export type { ListQuery } from './query.js';

export type { ListOptions, ListResult } from './list-answer.js';
export type { NftPageParams } from './nft-collections-page.js';

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
  parseTransactionsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery;
  parseEventsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery;
  walletTransactions(wallet: string, query: ListQuery, opts?: ListOptions): ListResult<TransactionRecord>;
  contractEvents(contract: string, signature: string, query: ListQuery, opts?: ListOptions): ListResult<EventRecord>;
  resolve(input: string, chainIds?: number[] | null): { meta: ResponseMeta; data: ResolveData };
  decode(contract: string, body: unknown, chainIds?: number[] | null): DecodeResponse;
  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage;
  /** Blockscout's ungrouped addresses/<address>/nft route (every instance, paged). */
  nftInstancesPage(address: string, params: NftPageParams): NftInstancesPage;
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
  parseTransactionsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery;
  parseEventsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery;
  walletTransactions(wallet: string, query: ListQuery, opts?: ListOptions): ListResult<TransactionRecord>;
  /** Every matching row (no paging, per-chain order), for tests. */
  allWalletTransactions(wallet: string, query: ListQuery, opts?: ListOptions): TransactionRecord[];
  contractEvents(contract: string, signature: string, query: ListQuery, opts?: ListOptions): ListResult<EventRecord>;
  allContractEvents(contract: string, signature: string, query: ListQuery): EventRecord[];
  resolve(input: string, chainIds?: number[] | null): { meta: ResponseMeta; data: ResolveData };
  decode(contract: string, body: unknown, chainIds?: number[] | null): DecodeResponse;
  nftHoldings(address: string, chainId?: number): NftHolding[];
  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage;
  nftInstancesPage(address: string, params: NftPageParams): NftInstancesPage;
}

const NAME_RE = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.eth$/i;

/** An NFT collection of a holder, as the collections page pages it. */
interface HeldNftHolding extends HeldCollection {
  holding: NftHolding;
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
    for (let i = 0; i < c.n; i++) if (c.hidden?.[i] !== 1) yield this.transactionRecord(c, i);
  }
  *logs(chainId: number): IterableIterator<EventRecord> {
    const c = this.chainState(chainId);
    if (!c) return;
    for (let i = 0; i < c.n; i++) if (c.hasLog(i) && c.hidden?.[i] !== 1) yield this.eventRecord(c, i);
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

  parseTransactionsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery {
    return parseListQuery(toParams(params), TRANSACTION_COLUMNS, rules);
  }
  parseEventsQuery(params: URLSearchParams | string, rules?: PagingRules): ListQuery {
    return parseListQuery(toParams(params), EVENT_COLUMNS, rules);
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
      side: { from: (row: number) => c.from[row] === actor, to: (row: number) => c.to[row] === actor },
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
        else if (kind === 'rich') eventSlot = topic0 === TOPIC0.Settled ? 0 : -1;
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
    return decodedStyle(c.key, row, opts);
  }

  walletTransactions(wallet: string, query: ListQuery, opts: ListOptions = {}): ListResult<TransactionRecord> {
    const address = this.resolveWalletInput(wallet);
    const sources = this.walletSources(address, query, opts);
    return listAnswer(
      sources,
      query,
      TRANSACTION_COLUMNS,
      this.metaChainIds(null),
      { address },
      (r) => this.txWithDecode(r, query, opts),
      opts,
    );
  }

  allWalletTransactions(wallet: string, query: ListQuery, opts: ListOptions = {}): TransactionRecord[] {
    const address = this.resolveWalletInput(wallet);
    return selectAll(this.walletSources(address, query, opts), query, TRANSACTION_COLUMNS).map((r) =>
      this.transactionRecord(r.state, r.row),
    );
  }

  private txWithDecode(r: SelectedRow<ChainState>, query: ListQuery, opts: ListOptions): TransactionRecord {
    const rec = this.transactionRecord(r.state, r.row);
    if (query.decode) rec.decoded = this.decodeTransaction(r.state, r.row, this.style(r.state, r.row, opts), opts.goValues);
    return rec;
  }

  private eventsPrelude(contract: string, signature: string) {
    return { address: contractAddress(contract), sig: parseEventSignature(signature) };
  }

  contractEvents(contract: string, signature: string, query: ListQuery, opts: ListOptions = {}): ListResult<EventRecord> {
    const { address, sig } = this.eventsPrelude(contract, signature);
    const sources = this.eventSources(address, sig.topic0, query);
    return listAnswer(
      sources,
      query,
      EVENT_COLUMNS,
      this.metaChainIds(null),
      { address, signature: sig.topic0 },
      (r) => {
        const rec = this.eventRecord(r.state, r.row);
        // The open-source indexer decodes events with the signature whether or not decode=true.
        if (query.decode || opts.goValues)
          rec.decoded = this.decodeEvent(r.state, r.row, sig, this.style(r.state, r.row, opts), opts.goValues);
        return rec;
      },
      opts,
    );
  }

  allContractEvents(contract: string, signature: string, query: ListQuery): EventRecord[] {
    const { address, sig } = this.eventsPrelude(contract, signature);
    return selectAll(this.eventSources(address, sig.topic0, query), query, EVENT_COLUMNS).map((r) => this.eventRecord(r.state, r.row));
  }

  // ---------------------------------------------------------------- resolve

  resolve(input: string, chainIds: number[] | null = null): { meta: ResponseMeta; data: ResolveData } {
    return resolveAnswer(input, this.states(chainIds), this.metaChainIds(chainIds), {
      block: (c, bn) => {
        const off = bn - c.spec.firstBlock;
        return off >= 0 && off <= c.headOff ? this.blockRecord(c, off) : null;
      },
      transaction: (c, hash) => {
        const row = c.rowOfHash(hash);
        if (row < 0) return null;
        return { transaction: this.transactionRecord(c, row), events: c.hasLog(row) ? [this.eventRecord(c, row)] : [] };
      },
      blockOfHash: (c, hash) => {
        const off = c.blockOffOfHash(hash);
        return off >= 0 ? this.blockRecord(c, off) : null;
      },
      eventSignature: (states, hash) =>
        (Object.values(TOPIC0) as string[]).includes(hash)
          ? this.latest(states, (c, row) => c.hasLog(row) && c.topic(row, 0) === hash).map(({ c, row }) => this.eventRecord(c, row))
          : null,
      contractTransactions: (states, address) => {
        const actor = this.actorByAddress.get(address);
        if (actor === undefined || actor < this.walletCount) return null;
        const rows = newestRows(
          states,
          (c) => c.actorRows.subarray(c.actorOffsets[actor]!, c.actorOffsets[actor + 1]!),
          (c, row) => c.blockTimestamp(row),
        );
        return rows.map(({ chain, row }) => this.transactionRecord(chain, row));
      },
      functionSelector: (states, selector) =>
        this.latest(states, (c, row) => c.functionSelector(row) === selector).map(({ c, row }) => this.transactionRecord(c, row)),
      nameAddress: (text) =>
        NAME_RE.test(text) && this.walletByName.has(text.toLowerCase())
          ? this.wallets[this.walletByName.get(text.toLowerCase())!]!.address
          : undefined,
      expected: 'expected a block number, a 0x hash, an address, a 4-byte selector or a known name',
    });
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
    const abi = ABI_BY_KIND[info.kind];
    return decodeAnswer(body, {
      call: (data) => (abi ? decodeCallWithAbi(abi, data, 'hex') : null),
      log: (topics, data) => this.decodeLogByAbi(info.kind, topics, data, 'hex'),
    });
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

  nftCollectionsPage(address: string, params: NftPageParams): NftCollectionsPage {
    return nftCollectionsPage(address, params, this.nftSource());
  }

  nftInstancesPage(address: string, params: NftPageParams): NftInstancesPage {
    return nftInstancesPage(address, params, this.nftSource());
  }

  private nftSource(): NftHoldingsSource<ChainState, HeldNftHolding> {
    return {
      chain: (chainId) => (chainId === undefined ? this.chainStates[0]! : this.chainState(chainId)),
      held: (c, holder, kinds) =>
        this.nftHoldings(holder, c.chainId)
          .filter((h) => kinds.includes(h.contract.kind))
          .map((h) => ({ address: h.contract.address, kind: h.contract.kind, holding: h })),
      collection: (c, holder, { holding: h }) => {
        const st = this.statsOf(c).get(this.actorByAddress.get(h.contract.address)!);
        const facts = {
          address: h.contract.address,
          kind: h.contract.kind,
          name: h.contract.name,
          symbol: h.contract.symbol,
          decimals: null,
          holders: st ? String(st.holders) : null,
          totalSupply: st ? st.supply.toString() : null,
        };
        const tokens = nftTokens(c, h.contract, h.tokens);
        return nftCollection(facts, holder, tokens, () => nftOwner(holder, false, this.wallet(holder)?.name ?? null));
      },
    };
  }
}

/** Builds the deterministic data set (same seed and size => identical data). */
export function buildSandboxData(opts: BuildOptions = {}): SandboxData {
  return new SandboxDataset(opts);
}

export type { SandboxDataset };
export { ChainState };
