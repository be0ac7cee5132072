/** One chain of the data set: its columns of generated rows, blocks and indexes, and the record columns the queries read. */
import { TOPIC0, TxKind, addressTopic, settledData, settledTopics, uintTopic, uintWord, type RichArgs } from './abi.js';
import { derivedHex, hash3, mix32, unmix32, wordHex } from './prng.js';
import { addToBloom } from './bloom.js';
import { calldataAt } from './calldata.js';
import { type ChainSpec, type ContractInfo } from './dataset-shapes.js';

export {
  START_TIMESTAMP,
  MIN_SPAN_DAYS,
  NAMES,
  NAMED_WALLET_IDS,
  DEPLOYER,
  ERC20_NAMES,
  ADJ,
  NOUN,
  ERC1155_GENESIS_AMOUNT,
  ERC1155_ID_SPACE,
  ZERO_BLOOM,
  EMPTY_TRIE_ROOT,
  EMPTY_UNCLES,
} from './world.js';
import { START_TIMESTAMP, ERC1155_GENESIS_AMOUNT, ZERO_BLOOM } from './world.js';

export { F } from './field-salts.js';
import { F } from './field-salts.js';

// ------------------------------------------------------------------ internal chain state

export interface Actor {
  address: string;
}

/** Columnar rows of one chain: one entry per transaction, in (block, transaction_index) order. */
/** What a chain reads of the whole data set (SandboxDataImpl in dataset.ts). */
export interface ChainsData {
  readonly actors: readonly Actor[];
  readonly contracts: readonly ContractInfo[];
  readonly contractIdsByChain: ReadonlyMap<number, number[]>;
}

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
    readonly data: ChainsData,
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
    return calldataAt(this, row);
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
