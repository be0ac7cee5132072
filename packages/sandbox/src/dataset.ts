import type { BlockRecord, DecodedEvent, DecodedTransaction, EventRecord, TransactionRecord } from '../../../src/shared-with-sandbox.js';
import {
  ABI_BY_KIND,
  TxKind,
  decodeCallWithAbi,
  decodeLogWith,
  decodeLogWithAbi,
  type BytesStyle,
  type ContractKind,
  type ParsedEventSignature,
} from './abi.js';
import { goDecodedEvent, goDecodedTransaction } from './go-values.js';
import { blockRecordAt, eventRecordAt, transactionRecordAt } from './chain-records.js';
import { logArgsAt as encodedLogArgs, txArgsAt as encodedTxArgs } from './encoded-args.js';
import { replayHoldings } from './nft-holdings-replay.js';
import { indexByActor, indexByEvent, numberLogs } from './chain-indexes.js';
import { SandboxOptionsError } from './errors.js';
import { Rng, hash3, wordHex } from './prng.js';
import { CHAIN_SPECS, type ChainSpec, type ContractInfo, type EncodedArgs, type NftHolding, type WalletInfo } from './dataset-shapes.js';
import {
  ADJ,
  ChainState,
  DEPLOYER,
  ERC1155_ID_SPACE,
  ERC20_NAMES,
  MIN_SPAN_DAYS,
  NAMED_WALLET_IDS,
  NAMES,
  NOUN,
  type Actor,
} from './chain-state.js';
export type { ChainInfo, ContractInfo, EncodedArgs, NftHolding, NftTokenHolding, WalletInfo } from './dataset-shapes.js';
export { ChainState } from './chain-state.js';
export { EVENT_COLUMNS, TRANSACTION_COLUMNS } from './chain-columns.js';

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

  transactionRecord(c: ChainState, row: number): TransactionRecord {
    return transactionRecordAt(c, row);
  }

  eventRecord(c: ChainState, row: number): EventRecord {
    return eventRecordAt(c, row);
  }

  blockRecord(c: ChainState, off: number): BlockRecord {
    return blockRecordAt(c, off);
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
    return encodedTxArgs(c, row);
  }

  /** The arguments a log was encoded from; null when the row has no log. */
  logArgsAt(c: ChainState, row: number): EncodedArgs | null {
    return encodedLogArgs(c, row);
  }

  // ---------------------------------------------------------------- NFT holdings

  private holdingsCache = new Map<number, Map<number, Map<number, Map<number, bigint>>>>();

  /** actor -> contract actor -> token id -> amount, replayed from the chain's successful NFT transfers (nft-holdings-replay.ts). */
  holdingsOf(c: ChainState): Map<number, Map<number, Map<number, bigint>>> {
    let held = this.holdingsCache.get(c.chainId);
    if (!held) this.holdingsCache.set(c.chainId, (held = replayHoldings(c)));
    return held;
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
