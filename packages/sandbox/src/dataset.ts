import type { BlockRecord, DecodedEvent, DecodedTransaction, EventRecord, TransactionRecord } from '../../../src/shared-with-sandbox.js';
import {
  ABI_BY_KIND,
  CANONICAL,
  TxKind,
  decodeCallWithAbi,
  decodeLogWith,
  decodeLogWithAbi,
  type BytesStyle,
  type ContractKind,
  type ParsedEventSignature,
} from './abi.js';
import { goDecodedEvent, goDecodedTransaction } from './go-values.js';
import { SandboxOptionsError } from './errors.js';
import { Rng, derivedHex, hash3, wordHex } from './prng.js';
import { CHAIN_SPECS, type ChainSpec, type ContractInfo, type EncodedArgs, type NftHolding, type WalletInfo } from './dataset-shapes.js';
import {
  ADJ,
  ChainState,
  DEPLOYER,
  EMPTY_TRIE_ROOT,
  EMPTY_UNCLES,
  ERC1155_ID_SPACE,
  ERC20_NAMES,
  F,
  MIN_SPAN_DAYS,
  NAMED_WALLET_IDS,
  NAMES,
  NOUN,
  ZERO_BLOOM,
  addToBloom,
  type Actor,
} from './chain-state.js';
export type { ChainInfo, ContractInfo, EncodedArgs, NftHolding, NftTokenHolding, WalletInfo } from './dataset-shapes.js';
export { ChainState, EVENT_COLUMNS, TRANSACTION_COLUMNS } from './chain-state.js';

// ------------------------------------------------------------------ build

export interface BuildOptions {
  seed?: number;
  transactions?: number;
  /**
   * Add one `rich` contract per chain (tuple, array, bytes and negative-int arguments; see
   * RICH_ABI); it takes the calls that are otherwise the last 4% of plain transfers. Off by
   * default, so the default data set stays as it was.
   */
  richContract?: boolean;
  /**
   * Serve this many small chains more (ids EXTRA_CHAIN_ID_BASE + 1, + 2, ...; EXTRA_CHAIN_TRANSACTIONS
   * transactions each, on top of `transactions`), e.g. for jobs with more chains than one request takes.
   */
  extraChains?: number;
}

export const MIN_TRANSACTIONS = 300;
export const EXTRA_CHAIN_ID_BASE = 1_000_000;
export const EXTRA_CHAIN_TRANSACTIONS = 120;

/** The three seeded chains, then the extra small ones (shaped like Base). */
function chainSpecs(extra: number): ChainSpec[] {
  const base = CHAIN_SPECS[1]!;
  const extras = Array.from({ length: extra }, (_, k) => ({
    ...base,
    chainId: EXTRA_CHAIN_ID_BASE + k + 1,
    name: `extra-${k + 1}`,
    share: 0,
  }));
  return [...CHAIN_SPECS, ...extras];
}

function chainCounts(total: number, specs: ChainSpec[]): number[] {
  const counts = specs.map((s) => (s.share === 0 ? EXTRA_CHAIN_TRANSACTIONS : Math.floor(total * s.share)));
  counts[0]! += total - counts.reduce((a, b, i) => a + (specs[i]!.share === 0 ? 0 : b), 0);
  return counts;
}

function contractPlan(spec: ChainSpec, n: number): { erc20: number; erc721: number; erc1155: number; unknown: number } {
  return {
    erc20: spec.erc20,
    erc721: Math.max(2, Math.min(spec.maxErc721, Math.floor(n / 60))),
    erc1155: Math.max(1, Math.min(spec.maxErc1155, Math.floor(n / 300))),
    unknown: 1,
  };
}

interface GenesisTx {
  kind: TxKind;
  from: number;
  to: number;
  arg: number;
  tokenId: number;
}

export class SandboxDataImpl {
  readonly seed: number;
  readonly chainStates: ChainState[] = [];
  readonly actors: Actor[] = [];
  readonly wallets: WalletInfo[] = [];
  /** By actor id - walletCount. */
  readonly contracts: ContractInfo[] = [];
  readonly contractIdsByChain = new Map<number, number[]>();
  readonly walletCount: number;
  readonly actorByAddress = new Map<string, number>();
  readonly walletByName = new Map<string, number>();
  private readonly contractKindByActor: ContractKind[] = [];

  constructor(opts: BuildOptions) {
    const seed = (opts.seed ?? 42) >>> 0;
    const total = opts.transactions ?? 20_000;
    if (!Number.isInteger(total) || total < MIN_TRANSACTIONS) {
      throw new SandboxOptionsError(`sandbox transactions must be an integer >= ${MIN_TRANSACTIONS}`, { details: `got ${total}` });
    }
    this.seed = seed;
    const W = Math.max(200, Math.min(500_000, Math.round(total / 40)));
    this.walletCount = W;
    for (let id = 0; id < W; id++) {
      let addr = '0x';
      for (let k = 0; k < 5; k++) addr += wordHex(hash3(seed ^ 0xa11ce, id, k));
      const nameIdx = NAMED_WALLET_IDS.indexOf(id);
      this.actors.push({ address: addr });
      this.wallets.push({ id, address: addr, name: nameIdx >= 0 ? NAMES[nameIdx]! : null, transactionsByChain: {}, transactionCount: 0 });
      if (nameIdx >= 0) this.walletByName.set(NAMES[nameIdx]!, id);
    }
    const extraChains = opts.extraChains ?? 0;
    if (!Number.isInteger(extraChains) || extraChains < 0) {
      throw new SandboxOptionsError('sandbox extra chains must be an integer >= 0', { details: `got ${extraChains}` });
    }
    const specs = chainSpecs(extraChains);
    const counts = chainCounts(total, specs);
    // contracts (actors after the wallets)
    const plans = specs.map((spec, ci) => contractPlan(spec, counts[ci]!));
    specs.forEach((spec, ci) => {
      const plan = plans[ci]!;
      const ids: number[] = [];
      const add = (kind: ContractKind, name: string, symbol: string | null) => {
        const actor = this.actors.length;
        let addr = '0x';
        for (let k = 0; k < 5; k++) addr += wordHex(hash3(seed ^ 0xc0de, actor, k));
        this.actors.push({ address: addr });
        this.contracts.push({ chainId: spec.chainId, address: addr, kind, name, symbol });
        this.contractKindByActor[actor] = kind;
        ids.push(this.contracts.length - 1);
      };
      for (let k = 0; k < plan.erc20; k++) add('erc20', ERC20_NAMES[k % ERC20_NAMES.length]![0], ERC20_NAMES[k % ERC20_NAMES.length]![1]);
      for (let k = 0; k < plan.erc721; k++) {
        const name = `${ADJ[k % ADJ.length]} ${NOUN[Math.floor(k / ADJ.length) % NOUN.length]}`;
        add(
          'erc721',
          name,
          name
            .split(' ')
            .map((w) => w.slice(0, 2).toUpperCase())
            .join('') + (k >= ADJ.length * NOUN.length ? String(k) : ''),
        );
      }
      for (let k = 0; k < plan.erc1155; k++) add('erc1155', `Sandbox Items ${k + 1}`, `SITM${k + 1}`);
      for (let k = 0; k < plan.unknown; k++) add('unknown', 'Mystery Machine', null);
      if (opts.richContract) add('rich', 'Sandbox Vault', 'VAULT');
      this.contractIdsByChain.set(spec.chainId, ids);
    });
    this.actors.forEach((a, i) => this.actorByAddress.set(a.address, i));
    specs.forEach((spec, ci) => this.chainStates.push(this.buildChain(spec, ci, counts[ci]!)));
    for (const c of this.chainStates) {
      for (let w = 0; w < W; w++) {
        const cnt = c.actorOffsets[w + 1]! - c.actorOffsets[w]!;
        this.wallets[w]!.transactionsByChain[c.chainId] = cnt;
        this.wallets[w]!.transactionCount += cnt;
      }
    }
  }

  contractActor(contractIndex: number): number {
    return this.walletCount + contractIndex;
  }
  contractKind(actor: number): ContractKind | null {
    return this.contractKindByActor[actor] ?? null;
  }

  private buildChain(spec: ChainSpec, ci: number, n: number): ChainState {
    const c = new ChainState(spec, ci, this.seed, n, this);
    const rng = new Rng(this.seed, 100 + ci);
    const byKind = this.placeContracts(c, spec);
    const genesis = this.genesisTransactions(c, byKind);
    if (genesis.length > n / 2) {
      throw new SandboxOptionsError('sandbox data set too small for its contracts', {
        details: `chain ${spec.chainId}: ${n} transactions`,
      });
    }
    c.genesisCount = genesis.length;
    this.drawTransactions(c, spec, n, rng, genesis, byKind);
    numberLogs(c, n);
    indexByActor(c, n, this.actors.length);
    indexByEvent(c, n);
    return c;
  }

  /** The chain's contracts in slots, and their actors by kind. */
  private placeContracts(c: ChainState, spec: ChainSpec): Record<ContractKind, number[]> {
    const byKind: Record<ContractKind, number[]> = { erc20: [], erc721: [], erc1155: [], unknown: [], rich: [] };
    this.contractIdsByChain.get(spec.chainId)!.forEach((id, slot) => {
      const actor = this.contractActor(id);
      c.contractSlot.set(actor, slot);
      c.contractActors.push(actor);
      byKind[this.contracts[id]!.kind].push(actor);
    });
    return byKind;
  }

  /** Genesis: deploy every contract, then mint the genesis NFTs and seed the hot wallets with tokens. */
  private genesisTransactions(c: ChainState, byKind: Record<ContractKind, number[]>): GenesisTx[] {
    const genesis: GenesisTx[] = [];
    for (const actor of c.contractActors) genesis.push({ kind: TxKind.deploy, from: DEPLOYER, to: -1, arg: actor, tokenId: 0 });
    for (const actor of byKind.erc20) {
      genesis.push({ kind: TxKind.erc20Transfer, from: DEPLOYER, to: actor, arg: 0, tokenId: 0 });
      genesis.push({ kind: TxKind.erc20Transfer, from: DEPLOYER, to: actor, arg: 1, tokenId: 0 });
    }
    for (const actor of [...byKind.erc721, ...byKind.erc1155]) {
      const kind = this.contractKindByActor[actor] === 'erc721' ? TxKind.erc721TransferFrom : TxKind.erc1155SafeTransferFrom;
      genesis.push({ kind, from: DEPLOYER, to: actor, arg: 0, tokenId: 0 });
      genesis.push({ kind, from: DEPLOYER, to: actor, arg: 0, tokenId: 1 });
      genesis.push({ kind, from: DEPLOYER, to: actor, arg: 1, tokenId: 2 });
    }
    return genesis;
  }

  /** The chain's n transactions in blocks: the genesis ones first, then drawn calls from the seeded sequence. */
  private drawTransactions(
    c: ChainState,
    spec: ChainSpec,
    n: number,
    rng: Rng,
    genesis: GenesisTx[],
    byKind: Record<ContractKind, number[]>,
  ): void {
    const W = this.walletCount;
    const nextToken = new Uint32Array(this.actors.length).fill(3);
    const nonces = new Uint32Array(W);
    const minSpan = (MIN_SPAN_DAYS * 86_400) / spec.blockTimeSeconds;
    const meanGap = Math.max(1, minSpan / (n / spec.txPerBlock));
    const gapRange = Math.max(1, Math.round(2 * meanGap - 1));
    const pickWallet = () => rng.int(W);
    const pickSender = () => {
      const r = rng.float();
      if (r < 0.3) return 0;
      if (r < 0.35) return 1;
      if (r < 0.39) return 2;
      return pickWallet();
    };
    const pickRecipient = () => (rng.float() < 0.1 ? 0 : pickWallet());
    let off = 0;
    let inBlock = 0;
    let blockSize = 1 + rng.int(2 * spec.txPerBlock - 1);
    for (let i = 0; i < n; i++) {
      if (inBlock === blockSize) {
        off += i < genesis.length ? 1 : 1 + rng.int(gapRange);
        inBlock = 0;
        blockSize = 1 + rng.int(2 * spec.txPerBlock - 1);
      }
      c.blockOff[i] = off;
      c.txIndex[i] = inBlock++;
      let tx: GenesisTx;
      const g = genesis[i];
      if (g) {
        tx = g;
        c.type[i] = 2;
        c.status[i] = 1;
      } else {
        const from = pickSender();
        tx = { from, ...drawCall(rng, from, byKind, nextToken, pickRecipient) };
        const tr = rng.float();
        c.type[i] = tr < 0.15 ? 0 : tr < 0.2 ? 1 : tr < 0.9 ? 2 : tr < 0.95 ? 3 : 4;
        c.status[i] = rng.float() < 0.04 ? 0 : 1;
      }
      c.kind[i] = tx.kind;
      c.from[i] = tx.from;
      c.to[i] = tx.to;
      c.arg[i] = tx.arg;
      c.tokenId[i] = tx.tokenId;
      c.nonce[i] = nonces[tx.from]!++;
    }
    c.headOff = off;
  }

  // ---------------------------------------------------------------- records

  chainState(chainId: number): ChainState | undefined {
    return this.chainStates.find((c) => c.chainId === chainId);
  }

  // Each record kind is one literal with its block columns written out: spreading a shared
  // block-columns object into it made building a record 6x slower on Node 20.
  transactionRecord(c: ChainState, row: number): TransactionRecord {
    const off = c.blockOff[row]!;
    const maxFee = c.maxFeePerGas(row);
    const maxPrio = c.maxPriorityFeePerGas(row);
    const blobPrice = c.blobGasPrice(row);
    const data = c.input(row);
    const k = c.kind[row]!;
    return {
      chain_id: c.chainId,
      block_number: c.spec.firstBlock + off,
      block_hash: c.blockHashOf(off),
      block_timestamp: c.blockTimestampOf(off),
      hash: c.txHash(row),
      nonce: c.nonce[row]!,
      transaction_index: c.txIndex[row]!,
      from_address: c.fromAddress(row),
      to_address: c.toAddress(row),
      value: c.value(row).toString(),
      gas_price: c.gasPrice(row).toString(),
      gas: c.gas(row),
      function_selector: k === TxKind.native || k === TxKind.deploy || k === TxKind.createOther ? null : data.slice(0, 10),
      data,
      max_fee_per_gas: maxFee === null ? null : maxFee.toString(),
      max_priority_fee_per_gas: maxPrio === null ? null : maxPrio.toString(),
      transaction_type: c.type[row]!,
      r: c.sigWord(row, F.r),
      s: c.sigWord(row, F.s),
      v: c.v(row),
      access_list_json: c.accessListJson(row),
      authorization_list_json: c.authorizationListJson(row),
      contract_address: c.contractAddress(row),
      gas_used: c.gasUsed(row),
      cumulative_gas_used: c.cumulativeGasUsed(row),
      effective_gas_price: c.gasPrice(row).toString(),
      blob_gas_used: c.blobGasUsed(row),
      blob_gas_price: blobPrice === null ? null : blobPrice.toString(),
      logs_bloom: c.logsBloom(row),
      status: c.status[row]!,
    };
  }

  eventRecord(c: ChainState, row: number): EventRecord {
    const off = c.blockOff[row]!;
    return {
      chain_id: c.chainId,
      block_number: c.spec.firstBlock + off,
      block_hash: c.blockHashOf(off),
      block_timestamp: c.blockTimestampOf(off),
      transaction_hash: c.txHash(row),
      transaction_index: c.txIndex[row]!,
      log_index: c.logIndex[row]!,
      address: c.toAddress(row)!,
      data: c.logData(row),
      topics: c.topics(row),
    };
  }

  blockRecord(c: ChainState, off: number): BlockRecord {
    const first = c.firstRowOfBlock(off);
    let end = first;
    let gasUsed = 0;
    const bloom = new Uint8Array(256);
    let anyLog = false;
    while (end < c.n && c.blockOff[end] === off) {
      gasUsed += c.gasUsed(end);
      if (c.hasLog(end)) {
        anyLog = true;
        addToBloom(bloom, c.toAddress(end)!);
        for (const t of c.topics(end)) addToBloom(bloom, t);
      }
      end++;
    }
    const txCount = end - first;
    const w = (salt: number, words: number) => derivedHex(hash3(c.blockKey, off, salt), c.blockKey, salt + 100, words);
    return {
      chain_id: c.chainId,
      block_number: c.spec.firstBlock + off,
      block_hash: c.blockHashOf(off),
      parent_hash: off === 0 ? w(F.blockWords, 8) : c.blockHashOf(off - 1),
      block_timestamp: c.blockTimestampOf(off),
      nonce: '0x0000000000000000',
      sha3_uncles: EMPTY_UNCLES,
      mix_hash: w(F.blockWords + 1, 8),
      miner: c.chainId === 1 ? w(F.miner, 5) : '0x4200000000000000000000000000000000000011',
      state_root: w(F.blockWords + 2, 8),
      transactions_root: txCount === 0 ? EMPTY_TRIE_ROOT : w(F.blockWords + 3, 8),
      receipts_root: txCount === 0 ? EMPTY_TRIE_ROOT : w(F.blockWords + 4, 8),
      logs_bloom: anyLog ? '0x' + Buffer.from(bloom).toString('hex') : ZERO_BLOOM,
      size: 600 + txCount * 180,
      extra_data: '0x',
      difficulty: '0',
      total_difficulty: c.chainId === 1 ? '58750003716598352816469' : '0',
      transaction_count: txCount,
      gas_limit: c.chainId === 1 ? 30_000_000 : 60_000_000,
      gas_used: gasUsed,
      withdrawals_root: w(F.blockWords + 5, 8),
      base_fee_per_gas: c.baseFeeOf(off),
    };
  }

  /**
   * decoded for a transaction, by the ABI of its `to` contract; null without one (`go`: the
   * open-source indexer's encodings, and its `{"name":""}` shape without one).
   */
  decodeTransaction(c: ChainState, row: number, style: BytesStyle, go = false): DecodedTransaction | null {
    const to = c.to[row]!;
    const kind = to < 0 ? undefined : this.contractKindByActor[to];
    const abi = kind ? ABI_BY_KIND[kind] : null;
    if (go) return goDecodedTransaction(abi, c.input(row));
    if (!abi) return null;
    const d = decodeCallWithAbi(abi, c.input(row), style);
    return d ? { name: d.name, signature: d.signature, inputs: d.inputs } : null;
  }

  /** decoded for an event with the request's signature; null for contracts without ABI or a mismatch. */
  decodeEvent(c: ChainState, row: number, sig: ParsedEventSignature, style: BytesStyle, go = false): DecodedEvent | null {
    // The open-source indexer decodes with the request's signature, whatever the contract.
    if (go) return goDecodedEvent(sig.item, c.topics(row), c.logData(row));
    const kind = this.contractKindByActor[c.to[row]!];
    if (!kind || !ABI_BY_KIND[kind]) return null;
    const d = decodeLogWith(sig.item, sig.canonical, c.topics(row), c.logData(row), style);
    return d ? { name: d.name, signature: d.signature, indexed_params: d.indexed_params, non_indexed_params: d.non_indexed_params } : null;
  }

  decodeLogByAbi(kind: ContractKind, topics: string[], data: string, style: BytesStyle) {
    const abi = ABI_BY_KIND[kind];
    return abi ? decodeLogWithAbi(abi, topics, data, style) : null;
  }

  /** The arguments a transaction's calldata was encoded from; null for plain transfers and creations. */
  txArgsAt(c: ChainState, row: number): EncodedArgs | null {
    const from = c.fromAddress(row);
    const recipient = () => c.address(c.arg[row]!);
    switch (c.kind[row]!) {
      case TxKind.erc20Transfer:
        return { name: 'transfer', signature: CANONICAL.transfer, args: { to: recipient(), value: c.tokenAmount(row).toString() } };
      case TxKind.erc20Approve:
        return { name: 'approve', signature: CANONICAL.approve, args: { spender: recipient(), value: c.tokenAmount(row).toString() } };
      case TxKind.erc721TransferFrom:
        return {
          name: 'transferFrom',
          signature: CANONICAL.transferFrom,
          args: { from, to: recipient(), tokenId: String(c.tokenId[row]) },
        };
      case TxKind.erc721SafeTransferFrom:
        return {
          name: 'safeTransferFrom',
          signature: CANONICAL.safeTransferFrom721,
          args: { from, to: recipient(), tokenId: String(c.tokenId[row]) },
        };
      case TxKind.erc1155SafeTransferFrom:
        return {
          name: 'safeTransferFrom',
          signature: CANONICAL.safeTransferFrom1155,
          args: { from, to: recipient(), id: String(c.tokenId[row]), value: c.tokenAmount(row).toString(), data: c.bytes1155(row) },
        };
      case TxKind.unknownPoke:
        return { name: 'poke', signature: 'poke(uint256,bytes32)', args: { round: String(row), tag: c.pokeTag(row) } };
      default:
        return null;
    }
  }

  /** The arguments a log was encoded from; null when the row has no log. */
  logArgsAt(c: ChainState, row: number): EncodedArgs | null {
    if (!c.hasLog(row)) return null;
    const from = c.fromAddress(row);
    const recipient = c.address(c.arg[row]!);
    switch (c.kind[row]!) {
      case TxKind.erc20Transfer:
        return { name: 'Transfer', signature: CANONICAL.Transfer, args: { from, to: recipient, value: c.tokenAmount(row).toString() } };
      case TxKind.erc20Approve:
        return {
          name: 'Approval',
          signature: CANONICAL.Approval,
          args: { owner: from, spender: recipient, value: c.tokenAmount(row).toString() },
        };
      case TxKind.erc721TransferFrom:
      case TxKind.erc721SafeTransferFrom:
        return { name: 'Transfer', signature: CANONICAL.Transfer, args: { from, to: recipient, tokenId: String(c.tokenId[row]) } };
      case TxKind.erc1155SafeTransferFrom:
        return {
          name: 'TransferSingle',
          signature: CANONICAL.TransferSingle,
          args: { operator: from, from, to: recipient, id: String(c.tokenId[row]), value: c.tokenAmount(row).toString() },
        };
      case TxKind.unknownPoke:
        return { name: 'SandboxPing', signature: CANONICAL.SandboxPing, args: { round: String(row), tag: c.pokeTag(row) } };
      default:
        return null;
    }
  }

  // ---------------------------------------------------------------- NFT holdings

  private holdingsCache = new Map<number, Map<number, Map<number, Map<number, bigint>>>>();

  /** actor -> contract actor -> token id -> amount, replayed from the chain's successful NFT transfers. */
  holdingsOf(c: ChainState): Map<number, Map<number, Map<number, bigint>>> {
    const cached = this.holdingsCache.get(c.chainId);
    if (cached) return cached;
    const owner721 = new Map<number, Map<number, number>>();
    const bal1155 = new Map<string, bigint>();
    for (let i = 0; i < c.n; i++) {
      if (c.status[i] !== 1) continue;
      const k = c.kind[i]!;
      if (k === TxKind.erc721TransferFrom || k === TxKind.erc721SafeTransferFrom) {
        let m = owner721.get(c.to[i]!);
        if (!m) owner721.set(c.to[i]!, (m = new Map<number, number>()));
        m.set(c.tokenId[i]!, c.arg[i]!);
      } else if (k === TxKind.erc1155SafeTransferFrom) {
        const amount = c.tokenAmount(i);
        const fromKey = `${c.to[i]}:${c.tokenId[i]}:${c.from[i]}`;
        const toKey = `${c.to[i]}:${c.tokenId[i]}:${c.arg[i]}`;
        if (!c.isGenesis(i)) {
          const fb = bal1155.get(fromKey) ?? 0n;
          bal1155.set(fromKey, fb > amount ? fb - amount : 0n);
        }
        bal1155.set(toKey, (bal1155.get(toKey) ?? 0n) + amount);
      }
    }
    const out = new Map<number, Map<number, Map<number, bigint>>>();
    const add = (holder: number, contract: number, id: number, amount: bigint) => {
      let h = out.get(holder);
      if (!h) out.set(holder, (h = new Map<number, Map<number, bigint>>()));
      let t = h.get(contract);
      if (!t) h.set(contract, (t = new Map<number, bigint>()));
      t.set(id, amount);
    };
    for (const [contract, m] of owner721) for (const [id, holder] of m) add(holder, contract, id, 1n);
    for (const [key, amount] of bal1155) {
      if (amount <= 0n) continue;
      const [contract, id, holder] = key.split(':').map(Number) as [number, number, number];
      add(holder, contract, id, amount);
    }
    this.holdingsCache.set(c.chainId, out);
    return out;
  }

  /** NFT holdings of an address on a chain, collections ordered by contract address, tokens by id. */
  nftHoldings(address: string, chainId?: number): NftHolding[] {
    const c = chainId === undefined ? this.chainStates[0]! : this.chainState(chainId);
    if (!c) return [];
    const actor = this.actorByAddress.get(address.toLowerCase());
    if (actor === undefined) return [];
    const h = this.holdingsOf(c).get(actor);
    if (!h) return [];
    const out: NftHolding[] = [];
    for (const [contract, tokens] of h) {
      const ids = [...tokens.entries()].sort((a, b) => a[0] - b[0]);
      out.push({
        contract: this.contracts[contract - this.walletCount]!,
        tokens: ids.map(([id, amount]) => ({ id: String(id), amount: amount.toString() })),
      });
    }
    return out.sort((a, b) => (a.contract.address < b.contract.address ? -1 : 1));
  }
}

/** A drawn (not genesis) transaction's call: its kind, target, argument and token id. */
function drawCall(
  rng: Rng,
  from: number,
  byKind: Record<ContractKind, number[]>,
  nextToken: Uint32Array,
  pickRecipient: () => number,
): Omit<GenesisTx, 'from'> {
  const pickOf = (arr: number[]) => arr[rng.int(arr.length)]!;
  const kr = rng.float();
  if (kr < 0.3) return { kind: TxKind.native, to: rng.float() < 0.04 ? from : pickRecipient(), arg: 0, tokenId: 0 };
  if (kr < 0.55) return { kind: TxKind.erc20Transfer, to: pickOf(byKind.erc20), arg: pickRecipient(), tokenId: 0 };
  if (kr < 0.62) return { kind: TxKind.erc20Approve, to: pickOf(byKind.erc20), arg: pickRecipient(), tokenId: 0 };
  if (kr < 0.77) {
    const kind = rng.float() < 0.67 ? TxKind.erc721TransferFrom : TxKind.erc721SafeTransferFrom;
    const to = pickOf(byKind.erc721);
    const arg = pickRecipient();
    const next = nextToken[to]!;
    const tokenId = next > 3 && rng.float() < 0.5 ? 3 + rng.int(next - 3) : nextToken[to]!++;
    return { kind, to, arg, tokenId };
  }
  if (kr < 0.85) {
    const to = pickOf(byKind.erc1155);
    const arg = pickRecipient();
    return { kind: TxKind.erc1155SafeTransferFrom, to, arg, tokenId: 3 + rng.int(ERC1155_ID_SPACE) };
  }
  if (kr < 0.95) return { kind: TxKind.unknownPoke, to: pickOf(byKind.unknown), arg: 0, tokenId: 0 };
  if (kr < 0.96) return { kind: TxKind.createOther, to: -1, arg: 0, tokenId: 0 };
  if (byKind.rich.length > 0) return { kind: TxKind.richSettle, to: pickOf(byKind.rich), arg: 0, tokenId: 0 };
  return { kind: TxKind.native, to: pickRecipient(), arg: 0, tokenId: 0 };
}

/** Log indexes: one log per successful token or unknown call, numbered within the block. */
function numberLogs(c: ChainState, n: number): void {
  let logCount = 0;
  let blockLogs = 0;
  for (let i = 0; i < n; i++) {
    if (c.txIndex[i] === 0) blockLogs = 0;
    if (c.hasLog(i)) {
      c.logIndex[i] = blockLogs++;
      logCount++;
    }
  }
  c.logCount = logCount;
}

/** The rows of each actor (as sender or recipient; a self-transfer once), as offsets into one array. */
function indexByActor(c: ChainState, n: number, actorCount: number): void {
  const A = actorCount;
  const offsets = new Uint32Array(A + 1);
  for (let i = 0; i < n; i++) {
    offsets[c.from[i]! + 1]!++;
    const t = c.to[i]!;
    if (t >= 0 && t !== c.from[i]) offsets[t + 1]!++;
  }
  for (let a = 0; a < A; a++) offsets[a + 1]! += offsets[a]!;
  const rows = new Uint32Array(offsets[A]!);
  const fill = offsets.slice(0, A);
  for (let i = 0; i < n; i++) {
    rows[fill[c.from[i]!]!++] = i;
    const t = c.to[i]!;
    if (t >= 0 && t !== c.from[i]) rows[fill[t]!++] = i;
  }
  c.actorOffsets = offsets;
  c.actorRows = rows;
}

/** The rows of each (contract slot, event slot) that logged, as offsets into one array. */
function indexByEvent(c: ChainState, n: number): void {
  const S = c.contractActors.length * 2;
  const eOffsets = new Uint32Array(S + 1);
  const keyOf = (i: number) => c.contractSlot.get(c.to[i]!)! * 2 + c.eventSlot(i);
  for (let i = 0; i < n; i++) if (c.hasLog(i)) eOffsets[keyOf(i) + 1]!++;
  for (let s = 0; s < S; s++) eOffsets[s + 1]! += eOffsets[s]!;
  const eRows = new Uint32Array(eOffsets[S]!);
  const eFill = eOffsets.slice(0, S);
  for (let i = 0; i < n; i++) if (c.hasLog(i)) eRows[eFill[keyOf(i)]!++] = i;
  c.eventOffsets = eOffsets;
  c.eventRows = eRows;
}
