import { keccak256, type Hex } from 'viem';
import type { BlockRecord, DecodedEvent, DecodedTransaction, EventRecord, TransactionRecord } from '../../../src/shared-with-sandbox.js';
import {
  ABI_BY_KIND,
  CANONICAL,
  TOPIC0,
  TxKind,
  addressTopic,
  decodeCallWithAbi,
  decodeLogWith,
  decodeLogWithAbi,
  encodeApprove,
  encodePoke,
  encodeSafeTransferFrom1155,
  encodeSafeTransferFrom721,
  encodeTransfer,
  encodeTransferFrom,
  encodeSettle,
  settledData,
  settledTopics,
  uintTopic,
  uintWord,
  type BytesStyle,
  type ContractKind,
  type ParsedEventSignature,
  type RichArgs,
} from './abi.js';
import { goDecodedEvent, goDecodedTransaction } from './go-values.js';
import { SandboxOptionsError } from './errors.js';
import { Rng, derivedHex, hash3, mix32, unmix32, wordHex } from './prng.js';
import type { ColumnCatalog, ColumnSpec } from './query.js';
import type { Column, ColumnType } from '../../../src/shared-with-sandbox.js';
import type { BLOCK_FIELDS, EVENT_QUERY_FIELDS, TRANSACTION_QUERY_FIELDS } from '../../../src/shared-with-sandbox.js';

// ------------------------------------------------------------------ public shapes

export interface ChainInfo {
  chainId: number;
  name: string;
  blockTimeSeconds: number;
  firstBlock: number;
  firstTimestamp: number;
  headBlock: number;
  headTimestamp: number;
  /** Transactions on this chain (all rows of `transactions(chainId)`). */
  transactionCount: number;
  /** Logs on this chain (all rows of `logs(chainId)`). */
  logCount: number;
}

export interface WalletInfo {
  /** Index in `wallets`; wallet 0 is the hottest (about a third of all transactions). */
  id: number;
  address: string;
  /** ENS-like name (`alice.eth`) accepted by the wallet route and resolve; null for most wallets. */
  name: string | null;
  /** Rows of the wallet route per chain (from OR to = wallet, a self-transfer once). */
  transactionsByChain: Record<number, number>;
  transactionCount: number;
}

export interface ContractInfo {
  chainId: number;
  address: string;
  kind: ContractKind;
  name: string;
  symbol: string | null;
}

/** The arguments a generated call or log was encoded from: addresses lowercase hex, uints decimal strings, bytes hex. */
export interface EncodedArgs {
  name: string;
  signature: string;
  args: Record<string, string>;
}

export interface NftTokenHolding {
  /** Token id, decimal. */
  id: string;
  /** 1 for ERC-721; the balance for ERC-1155 (decimal). */
  amount: string;
}
export interface NftHolding {
  contract: ContractInfo;
  tokens: NftTokenHolding[];
}

// ------------------------------------------------------------------ chain specs

interface ChainSpec {
  chainId: number;
  name: string;
  blockTimeSeconds: number;
  firstBlock: number;
  share: number;
  txPerBlock: number;
  baseFee: [number, number];
  priorityFee: [number, number];
  erc20: number;
  maxErc721: number;
  maxErc1155: number;
}

const CHAIN_SPECS: ChainSpec[] = [
  {
    chainId: 1,
    name: 'ethereum',
    blockTimeSeconds: 12,
    firstBlock: 19_130_000,
    share: 0.4,
    txPerBlock: 6,
    baseFee: [5e9, 60e9],
    priorityFee: [1e8, 3e9],
    erc20: 3,
    maxErc721: 130,
    maxErc1155: 25,
  },
  {
    chainId: 8453,
    name: 'base',
    blockTimeSeconds: 2,
    firstBlock: 10_300_000,
    share: 0.35,
    txPerBlock: 4,
    baseFee: [1e6, 1e8],
    priorityFee: [1e5, 2e6],
    erc20: 2,
    maxErc721: 10,
    maxErc1155: 3,
  },
  {
    chainId: 42161,
    name: 'arbitrum',
    blockTimeSeconds: 1,
    firstBlock: 176_000_000,
    share: 0.25,
    txPerBlock: 3,
    baseFee: [1e7, 1e8],
    priorityFee: [0, 1e6],
    erc20: 2,
    maxErc721: 8,
    maxErc1155: 2,
  },
];

/** 2024-02-01T00:00:00Z */
const START_TIMESTAMP = 1_706_745_600;
/** Every chain spans at least this many days of blocks (more when the data set is large). */
const MIN_SPAN_DAYS = 4;
const NAMES = ['alice.eth', 'bob.eth', 'carol.eth', 'deployer.eth', 'dave.eth', 'erin.eth', 'frank.eth', 'grace.eth'];
const NAMED_WALLET_IDS = [0, 1, 2, 3, 4, 5, 6, 7];
const DEPLOYER = 3;
const ERC20_NAMES: [string, string][] = [
  ['Sandbox USD', 'SUSD'],
  ['Wrapped Sand', 'WSAND'],
  ['Block Token', 'BLK'],
];
const ADJ = ['Pixel', 'Crypto', 'Bored', 'Lazy', 'Cosmic', 'Tiny', 'Golden', 'Neon', 'Quantum', 'Wild'];
const NOUN = ['Punks', 'Apes', 'Lions', 'Birds', 'Cats', 'Robots', 'Ghosts', 'Frogs', 'Knights', 'Whales', 'Dragons', 'Owls', 'Foxes'];
const ERC1155_GENESIS_AMOUNT = 1000n;
const ERC1155_ID_SPACE = 20;
const ZERO_BLOOM = '0x' + '0'.repeat(512);
const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';

// field salts for derived values
const F = {
  value: 21,
  valueMant: 22,
  valueExp: 23,
  gas: 24,
  gasUsed: 25,
  prio: 26,
  r: 27,
  s: 28,
  v: 29,
  access: 30,
  amountMant: 31,
  amountExp: 32,
  amount1155: 33,
  data1155: 34,
  tag: 35,
  auth: 36,
  blob: 37,
  blobPrice: 38,
  otherContract: 39,
  baseFee: 40,
  blockWords: 41,
  miner: 42,
  legacy: 43,
  variant: 44,
  rich: 45,
} as const;

// ------------------------------------------------------------------ internal chain state

interface Actor {
  address: string;
}

/** Columnar rows of one chain: one entry per transaction, in (block, transaction_index) order. */
export class ChainState {
  readonly spec: ChainSpec;
  readonly index: number;
  readonly key: number;
  readonly txKey: number;
  readonly blockKey: number;
  readonly n: number;
  readonly blockOff: Uint32Array;
  readonly txIndex: Uint16Array;
  readonly from: Uint32Array;
  /** Actor id, or -1 for a contract creation. */
  readonly to: Int32Array;
  /** Recipient / spender actor of a token call; deployed contract actor of a deploy. */
  readonly arg: Uint32Array;
  readonly tokenId: Uint32Array;
  readonly kind: Uint8Array;
  readonly type: Uint8Array;
  readonly status: Uint8Array;
  readonly nonce: Uint32Array;
  /** log_index of the transaction's log (each successful token/unknown call emits exactly one). */
  readonly logIndex: Uint16Array;
  genesisCount = 0;
  headOff = 0;
  logCount = 0;
  /** actor -> rows where it is from or to (CSR). */
  actorOffsets!: Uint32Array;
  actorRows!: Uint32Array;
  /** (contract slot * 2 + event slot) -> rows with that log (CSR). */
  eventOffsets!: Uint32Array;
  eventRows!: Uint32Array;
  /** contract actor -> slot within this chain's contracts. */
  readonly contractSlot = new Map<number, number>();
  readonly contractActors: number[] = [];

  constructor(
    spec: ChainSpec,
    index: number,
    seed: number,
    n: number,
    readonly data: SandboxDataImpl,
  ) {
    this.spec = spec;
    this.index = index;
    this.key = hash3(seed, spec.chainId, 0x5eed);
    this.txKey = hash3(this.key, 1, 0x7a);
    this.blockKey = hash3(this.key, 2, 0xb1);
    this.n = n;
    this.blockOff = new Uint32Array(n);
    this.txIndex = new Uint16Array(n);
    this.from = new Uint32Array(n);
    this.to = new Int32Array(n);
    this.arg = new Uint32Array(n);
    this.tokenId = new Uint32Array(n);
    this.kind = new Uint8Array(n);
    this.type = new Uint8Array(n);
    this.status = new Uint8Array(n);
    this.nonce = new Uint32Array(n);
    this.logIndex = new Uint16Array(n);
  }

  get chainId(): number {
    return this.spec.chainId;
  }

  r32(row: number, field: number): number {
    return hash3(this.key ^ Math.imul(field, 0x9e3779b1), row, field);
  }

  blockNumber(row: number): number {
    return this.spec.firstBlock + this.blockOff[row]!;
  }
  blockTimestampOf(off: number): number {
    return START_TIMESTAMP + off * this.spec.blockTimeSeconds;
  }
  blockTimestamp(row: number): number {
    return this.blockTimestampOf(this.blockOff[row]!);
  }
  /**
   * Reorganisations applied (src/sandbox/reorg.ts): blocks from `fromOff` on hash with `key`
   * (the last branch that covers a block wins); rows in `rekeyed` hash with their key (a new
   * transaction in place of the old one); rows in `hidden` are gone.
   */
  readonly branches: { fromOff: number; key: number }[] = [];
  readonly rekeyed = new Map<number, number>();
  hidden: Uint8Array | null = null;

  blockKeyOf(off: number): number {
    for (let i = this.branches.length - 1; i >= 0; i--) if (off >= this.branches[i]!.fromOff) return this.branches[i]!.key;
    return this.blockKey;
  }
  blockHashOf(off: number): string {
    const key = this.blockKeyOf(off);
    return derivedHex(mix32(off ^ key), key, 12, 8);
  }
  /** Block offset of a block hash, or -1. */
  blockOffOfHash(hash: string): number {
    for (const key of [this.blockKey, ...this.branches.map((b) => b.key)]) {
      const o = (unmix32(parseInt(hash.slice(2, 10), 16)) ^ key) >>> 0;
      if (o <= this.headOff && this.blockHashOf(o) === hash) return o;
    }
    return -1;
  }
  txHash(row: number): string {
    const key = this.rekeyed.get(row) ?? this.txKey;
    return derivedHex(mix32(row ^ key), key, 11, 8);
  }
  /** Row of a transaction hash, or -1. */
  rowOfHash(hash: string): number {
    for (const key of [this.txKey, ...new Set(this.rekeyed.values())]) {
      const row = (unmix32(parseInt(hash.slice(2, 10), 16)) ^ key) >>> 0;
      if (row < this.n && this.hidden?.[row] !== 1 && this.txHash(row) === hash) return row;
    }
    return -1;
  }

  address(actor: number): string {
    return this.data.actors[actor]!.address;
  }
  fromAddress(row: number): string {
    return this.address(this.from[row]!);
  }
  toAddress(row: number): string | null {
    const t = this.to[row]!;
    return t < 0 ? null : this.address(t);
  }
  isGenesis(row: number): boolean {
    return row < this.genesisCount;
  }

  value(row: number): bigint {
    const k = this.kind[row]!;
    if (k === TxKind.native) {
      if (this.r32(row, F.value) % 20 === 0) return 0n;
      const mant = BigInt(1 + (this.r32(row, F.valueMant) % 999_999));
      return mant * 10n ** BigInt(9 + (this.r32(row, F.valueExp) % 14));
    }
    if (k === TxKind.unknownPoke && this.r32(row, F.value) % 5 === 0) {
      return BigInt(1 + (this.r32(row, F.valueMant) % 1000)) * 10n ** 12n;
    }
    return 0n;
  }
  tokenAmount(row: number): bigint {
    const k = this.kind[row]!;
    if (k === TxKind.erc1155SafeTransferFrom) {
      return this.isGenesis(row) ? ERC1155_GENESIS_AMOUNT : BigInt(1 + (this.r32(row, F.amount1155) % 100));
    }
    const mant = BigInt(1 + (this.r32(row, F.amountMant) % 999_999));
    return mant * 10n ** BigInt(this.r32(row, F.amountExp) % 25);
  }
  bytes1155(row: number): string {
    const h = this.r32(row, F.data1155);
    if (h % 3 === 0) return '0x';
    const len = 4 + (h % 29);
    let s = '';
    for (let k = 0; s.length < len * 2; k++) s += wordHex(hash3(h, row, k));
    return '0x' + s.slice(0, len * 2);
  }
  /** Bytes of a `rich` row: `len` bytes derived from (row, salt). */
  richBytes(row: number, salt: number, len: number): string {
    let s = '';
    for (let k = 0; s.length < len * 2; k++) s += wordHex(hash3(this.r32(row, F.rich + salt), row, k));
    return '0x' + s.slice(0, len * 2);
  }
  /** Arguments of a `rich` call and its log: negatives, values beyond 2^53, empty and odd-length bytes. */
  richArgs(row: number): RichArgs {
    const h = (k: number) => this.r32(row, F.rich + k);
    const big = (k: number) => BigInt(1 + (h(k) % 999_999)) * 10n ** BigInt(10 + (h(k + 1) % 17));
    const shiftKind = h(8) % 3;
    return {
      account: this.fromAddress(row),
      delta: (h(0) & 1 ? -1n : 1n) * big(1),
      limits: [big(3), BigInt(h(5) % 1000)],
      memo: this.richBytes(row, 6, h(6) % 40),
      refs: Array.from({ length: h(7) % 3 }, (_, k) => derivedHex(h(20 + k), this.key, F.rich, 8)),
      shift: shiftKind === 0 ? -(2n ** 60n + BigInt(h(9))) : shiftKind === 1 ? BigInt(h(9)) : -BigInt(h(9) % 1000),
      tag: '0x' + wordHex(h(10)),
      code: '0x' + wordHex(h(11)) + wordHex(h(12)),
      info: {
        amount: big(13),
        change: (h(14) & 1 ? -1n : 1n) * big(15),
        flags: '0x' + wordHex(h(17)).slice(0, 6),
        note: this.richBytes(row, 18, h(18) % 20),
      },
      window: [BigInt(this.blockNumber(row)), big(19)],
      payload: this.richBytes(row, 21, h(21) % 50),
      skew: (h(22) % 2_000_000) - 1_000_000,
    };
  }
  pokeTag(row: number): string {
    return derivedHex(this.r32(row, F.tag), this.key, F.tag, 8);
  }
  gas(row: number): number {
    const k = this.kind[row]!;
    const base = k === TxKind.native ? 21_000 : k === TxKind.deploy || k === TxKind.createOther ? 1_200_000 : 60_000;
    if (k === TxKind.native && this.type[row] !== 3) return base;
    return base + (this.r32(row, F.gas) % 40_000);
  }
  gasUsed(row: number): number {
    const gas = this.gas(row);
    if (this.kind[row] === TxKind.native) return gas;
    const pct = this.status[row] === 0 ? 30 + (this.r32(row, F.gasUsed) % 60) : 60 + (this.r32(row, F.gasUsed) % 40);
    return Math.floor((gas * pct) / 100);
  }
  cumulativeGasUsed(row: number): number {
    let sum = 0;
    for (let r = row - this.txIndex[row]!; r <= row; r++) sum += this.gasUsed(r);
    return sum;
  }
  baseFeeOf(off: number): number {
    const [lo, hi] = this.spec.baseFee;
    return lo + (hash3(this.blockKey, off, F.baseFee) % (hi - lo));
  }
  priorityFee(row: number): number {
    const [lo, hi] = this.spec.priorityFee;
    return lo + (this.r32(row, F.prio) % (hi - lo + 1));
  }
  gasPrice(row: number): bigint {
    return BigInt(this.baseFeeOf(this.blockOff[row]!)) + BigInt(this.priorityFee(row));
  }
  maxFeePerGas(row: number): bigint | null {
    if (this.type[row]! < 2) return null;
    return 2n * BigInt(this.baseFeeOf(this.blockOff[row]!)) + BigInt(this.priorityFee(row));
  }
  maxPriorityFeePerGas(row: number): bigint | null {
    if (this.type[row]! < 2) return null;
    return BigInt(this.priorityFee(row));
  }
  blobGasUsed(row: number): number | null {
    return this.type[row] === 3 ? 131_072 * (1 + (this.r32(row, F.blob) % 6)) : null;
  }
  blobGasPrice(row: number): bigint | null {
    return this.type[row] === 3 ? BigInt(1 + (this.r32(row, F.blobPrice) % 5000)) : null;
  }
  sigWord(row: number, field: number): string {
    return BigInt(derivedHex(this.r32(row, field) & 0x7fffffff, this.key, field ^ row, 8)).toString();
  }
  v(row: number): string {
    const parity = this.r32(row, F.v) & 1;
    if (this.type[row] === 0) return String(this.spec.chainId * 2 + 35 + parity);
    return String(parity);
  }
  accessListJson(row: number): string | null {
    if (this.type[row] === 0) return null;
    const h = this.r32(row, F.access);
    if (h % 4 !== 0 || this.to[row]! < 0) return '[]';
    const key = derivedHex(h, this.key, F.access, 8);
    return JSON.stringify([{ address: this.toAddress(row), storageKeys: [key] }]);
  }
  authorizationListJson(row: number): string | null {
    if (this.type[row] !== 4) return null;
    const h = this.r32(row, F.auth);
    const delegate = this.data.contracts[this.data.contractIdsByChain.get(this.chainId)![h % this.contractActors.length]!]!;
    return JSON.stringify([
      {
        chainId: String(this.chainId),
        address: delegate.address,
        nonce: String(this.nonce[row]! + 1),
        yParity: String(h & 1),
        r: derivedHex(h, this.key, F.auth + 1, 8),
        s: derivedHex(h ^ 1, this.key, F.auth + 2, 8),
      },
    ]);
  }
  contractAddress(row: number): string | null {
    const k = this.kind[row]!;
    if (k === TxKind.deploy) return this.address(this.arg[row]!);
    if (k === TxKind.createOther) return derivedHex(this.r32(row, F.otherContract), this.key, F.otherContract, 5);
    return null;
  }
  /** Calldata, encoded exactly as the ABI says. */
  input(row: number): string {
    const k = this.kind[row]!;
    const from = this.fromAddress(row);
    switch (k) {
      case TxKind.erc20Transfer:
        return encodeTransfer(this.address(this.arg[row]!), this.tokenAmount(row));
      case TxKind.erc20Approve:
        return encodeApprove(this.address(this.arg[row]!), this.tokenAmount(row));
      case TxKind.erc721TransferFrom:
        return encodeTransferFrom(from, this.address(this.arg[row]!), BigInt(this.tokenId[row]!));
      case TxKind.erc721SafeTransferFrom:
        return encodeSafeTransferFrom721(from, this.address(this.arg[row]!), BigInt(this.tokenId[row]!));
      case TxKind.erc1155SafeTransferFrom:
        return encodeSafeTransferFrom1155(
          from,
          this.address(this.arg[row]!),
          BigInt(this.tokenId[row]!),
          this.tokenAmount(row),
          this.bytes1155(row),
        );
      case TxKind.unknownPoke:
        return encodePoke(BigInt(row), this.pokeTag(row));
      case TxKind.richSettle:
        return encodeSettle(this.richArgs(row));
      case TxKind.deploy:
      case TxKind.createOther:
        // Init code stub: a recognisable constructor prefix plus a per-contract word.
        return '0x6080604052348015600f57600080fd5b50' + wordHex(this.r32(row, F.otherContract)) + '00';
      default:
        return '0x';
    }
  }
  functionSelector(row: number): string | null {
    const k = this.kind[row]!;
    if (k === TxKind.native || k === TxKind.deploy || k === TxKind.createOther) return null;
    return this.input(row).slice(0, 10);
  }
  hasLog(row: number): boolean {
    const k = this.kind[row]!;
    return this.status[row] === 1 && ((k >= TxKind.erc20Transfer && k <= TxKind.unknownPoke) || k === TxKind.richSettle);
  }
  /** 0 or 1: the event slot of the row's log within its contract (ERC-20 Approval = 1). */
  eventSlot(row: number): number {
    return this.kind[row] === TxKind.erc20Approve ? 1 : 0;
  }
  topics(row: number): string[] {
    const from = this.fromAddress(row);
    switch (this.kind[row]!) {
      case TxKind.erc20Transfer:
        return [TOPIC0.Transfer, addressTopic(from), addressTopic(this.address(this.arg[row]!))];
      case TxKind.erc20Approve:
        return [TOPIC0.Approval, addressTopic(from), addressTopic(this.address(this.arg[row]!))];
      case TxKind.erc721TransferFrom:
      case TxKind.erc721SafeTransferFrom:
        return [TOPIC0.Transfer, addressTopic(from), addressTopic(this.address(this.arg[row]!)), uintTopic(this.tokenId[row]!)];
      case TxKind.erc1155SafeTransferFrom:
        return [TOPIC0.TransferSingle, addressTopic(from), addressTopic(from), addressTopic(this.address(this.arg[row]!))];
      case TxKind.unknownPoke:
        return [TOPIC0.SandboxPing, uintTopic(row)];
      case TxKind.richSettle:
        return settledTopics(this.richArgs(row));
      default:
        return [];
    }
  }
  topic(row: number, k: number): string | null {
    if (!this.hasLog(row)) return null;
    return this.topics(row)[k] ?? null;
  }
  logData(row: number): string {
    switch (this.kind[row]!) {
      case TxKind.erc20Transfer:
      case TxKind.erc20Approve:
        return '0x' + uintWord(this.tokenAmount(row));
      case TxKind.erc1155SafeTransferFrom:
        return '0x' + uintWord(this.tokenId[row]!) + uintWord(this.tokenAmount(row));
      case TxKind.unknownPoke:
        return this.pokeTag(row);
      case TxKind.richSettle:
        return settledData(this.richArgs(row));
      default:
        return '0x';
    }
  }
  logsBloom(row: number): string {
    if (!this.hasLog(row)) return ZERO_BLOOM;
    const bloom = new Uint8Array(256);
    addToBloom(bloom, this.toAddress(row)!);
    for (const t of this.topics(row)) addToBloom(bloom, t);
    return '0x' + Buffer.from(bloom).toString('hex');
  }

  /** First row of block offset `off` (or the row after where it would be), by binary search. */
  firstRowOfBlock(off: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.blockOff[mid]! < off) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Bloom bit positions per input (addresses and topics repeat a lot, keccak is the cost). */
const bloomBitsCache = new Map<string, [number, number, number]>();

function addToBloom(bloom: Uint8Array, hex: string): void {
  let bits = bloomBitsCache.get(hex);
  if (!bits) {
    const h = keccak256(hex as Hex, 'bytes');
    bits = [((h[0]! << 8) | h[1]!) & 2047, ((h[2]! << 8) | h[3]!) & 2047, ((h[4]! << 8) | h[5]!) & 2047];
    if (bloomBitsCache.size >= 500_000) bloomBitsCache.clear();
    bloomBitsCache.set(hex, bits);
  }
  for (const bit of bits) bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
}

// ------------------------------------------------------------------ columns

type TxCol = ColumnCatalog<ChainState>;

/** How the sandbox compares a field of each column type. */
type KindOf<T extends ColumnType> = T extends 'int32' | 'int64' ? 'num' : T extends 'uint256' ? 'big' : 'str';

/** Query columns named as the service's fields (src/columns/record-fields.ts) and compared as their type says. */
type FieldCatalog<Fields extends readonly Column[]> = {
  [F in Fields[number] as F['name']]?: ColumnSpec<ChainState> & { kind: KindOf<F['type']> };
};

const big = (v: bigint | null) => v;

/** Columns of the block fields of transactions and events. */
const BLOCK_FIELD_COLUMNS = {
  chain_id: { kind: 'num', wire: 'string', get: (c) => c.chainId },
  block_number: { kind: 'num', wire: 'number', monotonic: true, get: (c, r) => c.blockNumber(r) },
  block_hash: { kind: 'str', wire: 'string', get: (c, r) => c.blockHashOf(c.blockOff[r]!) },
  block_timestamp: { kind: 'num', wire: 'number', monotonic: true, get: (c, r) => c.blockTimestamp(r) },
} satisfies FieldCatalog<typeof BLOCK_FIELDS>;

/** Columns of wallet transactions: filters, group_by and aggregate names. */
export const TRANSACTION_COLUMNS: TxCol = {
  ...BLOCK_FIELD_COLUMNS,
  hash: { kind: 'str', wire: 'string', get: (c, r) => c.txHash(r) },
  nonce: { kind: 'num', wire: 'number', get: (c, r) => c.nonce[r]! },
  transaction_index: { kind: 'num', wire: 'number', get: (c, r) => c.txIndex[r]! },
  from_address: { kind: 'str', wire: 'string', get: (c, r) => c.fromAddress(r) },
  to_address: { kind: 'str', wire: 'string', get: (c, r) => c.toAddress(r) },
  value: { kind: 'big', wire: 'string', get: (c, r) => c.value(r) },
  gas_price: { kind: 'big', wire: 'string', get: (c, r) => c.gasPrice(r) },
  gas: { kind: 'num', wire: 'number', get: (c, r) => c.gas(r) },
  function_selector: { kind: 'str', wire: 'string', get: (c, r) => c.functionSelector(r) },
  max_fee_per_gas: { kind: 'big', wire: 'string', get: (c, r) => big(c.maxFeePerGas(r)) },
  max_priority_fee_per_gas: { kind: 'big', wire: 'string', get: (c, r) => big(c.maxPriorityFeePerGas(r)) },
  transaction_type: { kind: 'num', wire: 'number', get: (c, r) => c.type[r]! },
  contract_address: { kind: 'str', wire: 'string', get: (c, r) => c.contractAddress(r) },
  gas_used: { kind: 'num', wire: 'number', get: (c, r) => c.gasUsed(r) },
  cumulative_gas_used: { kind: 'num', wire: 'number', get: (c, r) => c.cumulativeGasUsed(r) },
  effective_gas_price: { kind: 'big', wire: 'string', get: (c, r) => c.gasPrice(r) },
  blob_gas_used: { kind: 'num', wire: 'number', get: (c, r) => c.blobGasUsed(r) },
  blob_gas_price: { kind: 'big', wire: 'string', get: (c, r) => c.blobGasPrice(r) },
  status: { kind: 'num', wire: 'number', get: (c, r) => c.status[r]! },
} satisfies FieldCatalog<typeof TRANSACTION_QUERY_FIELDS>;

/** Columns of contract events (`topic_N` are the filter_topic_N columns). */
export const EVENT_COLUMNS: TxCol = {
  ...BLOCK_FIELD_COLUMNS,
  transaction_hash: { kind: 'str', wire: 'string', get: (c, r) => c.txHash(r) },
  transaction_index: { kind: 'num', wire: 'number', get: (c, r) => c.txIndex[r]! },
  log_index: { kind: 'num', wire: 'number', get: (c, r) => c.logIndex[r]! },
  address: { kind: 'str', wire: 'string', get: (c, r) => c.toAddress(r) },
  data: { kind: 'str', wire: 'string', get: (c, r) => c.logData(r) },
  topic_0: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 0) },
  topic_1: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 1) },
  topic_2: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 2) },
  topic_3: { kind: 'str', wire: 'string', get: (c, r) => c.topic(r, 3) },
} satisfies FieldCatalog<typeof EVENT_QUERY_FIELDS>;

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
