import { decodeAbiParameters, type Hex } from 'viem';
import type { BlockRecord, EventRecord, TransactionRecord } from '../../../../src/shared-with-sandbox.js';
import { TOPIC0, type ContractKind } from '../abi.js';
import { EVENT_COLUMNS, TRANSACTION_COLUMNS } from '../dataset.js';
import type { CellValue, ColumnCatalog, ColumnKind } from '../query.js';
import { ReorgDuringLoad, type LoadedBlock } from './convert.js';

/** ERC-1155 TransferBatch(address,address,address,uint256[],uint256[]) */
export const TRANSFER_BATCH_TOPIC0 = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** name/symbol/decimals read from a token contract (null where the call failed). */
export interface TokenInfo {
  name: string | null;
  symbol: string | null;
  decimals: number | null;
}

/** holder -> contract -> token id (decimal) -> amount. */
export type Holdings = Map<string, Map<string, Map<string, bigint>>>;

function push<K>(map: Map<K, number[]>, key: K, row: number): void {
  const rows = map.get(key);
  if (rows) rows.push(row);
  else map.set(key, [row]);
}

/** Drops the trailing rows >= cut of a row list (rows are ascending). */
function popFrom<K>(map: Map<K, number[]>, key: K, cut: number): void {
  const rows = map.get(key);
  if (!rows) return;
  while (rows.length > 0 && rows[rows.length - 1]! >= cut) rows.pop();
  if (rows.length === 0) map.delete(key);
}

function topicAddress(topic: string | undefined): string | null {
  return topic && topic.length === 66 ? `0x${topic.slice(26)}` : null;
}

/**
 * Token standard a log shows its contract follows: Transfer/Approval with 2 indexed params is ERC-20,
 * with 3 (the token id indexed) ERC-721; TransferSingle/TransferBatch ERC-1155.
 */
export function kindOfLog(log: EventRecord): ContractKind | null {
  const t0 = log.topics[0];
  if (t0 === TOPIC0.Transfer || t0 === TOPIC0.Approval)
    return log.topics.length === 3 ? 'erc20' : log.topics.length === 4 ? 'erc721' : null;
  if (t0 === TOPIC0.TransferSingle || t0 === TRANSFER_BATCH_TOPIC0) return 'erc1155';
  return null;
}

const KINDS: ContractKind[] = ['erc20', 'erc721', 'erc1155'];

/**
 * One chain as loaded from its node: a contiguous run of blocks (no gaps, each block's parent the
 * previous one) with their transactions and logs in (block, transaction_index / log_index) order,
 * and the indexes the routes need. A reorganisation removes a suffix (`truncateFrom`) and the new
 * blocks are appended again, so row numbers of the blocks that stay never change.
 */
export class ChainStore {
  readonly blocks: BlockRecord[] = [];
  readonly txs: TransactionRecord[] = [];
  readonly logs: EventRecord[] = [];
  /** Token contracts' name/symbol/decimals, filled in by the follower. */
  readonly tokenInfo = new Map<string, TokenInfo>();
  /** Bumped on every change (caches key on it). */
  version = 0;
  /** Blocks removed by reorganisations since the start. */
  reorgedBlocks = 0;

  private readonly blockTxStart: number[] = [];
  private readonly blockLogStart: number[] = [];
  private readonly txByHash = new Map<string, number>();
  private readonly blockByHash = new Map<string, number>();
  private readonly walletRows = new Map<string, number[]>();
  private readonly eventRows = new Map<string, number[]>();
  private readonly logsByTx = new Map<string, number[]>();
  private readonly createdContracts = new Map<string, number>();
  private readonly kindEvidence = new Map<string, [number, number, number]>();
  private readonly logCount = new Map<string, number>();
  private holdingsCache: { version: number; holdings: Holdings } | null = null;

  constructor(
    readonly chainId: number,
    readonly rpcUrl: string,
  ) {}

  get firstBlock(): number | null {
    return this.blocks[0]?.block_number ?? null;
  }
  get head(): BlockRecord | null {
    return this.blocks[this.blocks.length - 1] ?? null;
  }

  blockAt(blockNumber: number): BlockRecord | null {
    const first = this.firstBlock;
    return first === null ? null : (this.blocks[blockNumber - first] ?? null);
  }
  blockOfHash(hash: string): BlockRecord | null {
    const i = this.blockByHash.get(hash.toLowerCase());
    return i === undefined ? null : this.blocks[i]!;
  }
  txRowOfHash(hash: string): number {
    return this.txByHash.get(hash.toLowerCase()) ?? -1;
  }
  logsOfTx(hash: string): EventRecord[] {
    return (this.logsByTx.get(hash.toLowerCase()) ?? []).map((row) => this.logs[row]!);
  }
  /** Rows of transactions sent or received by the address, ascending. */
  walletRowsOf(address: string): readonly number[] {
    return this.walletRows.get(address.toLowerCase()) ?? [];
  }
  /** Rows of logs of `address` with topic0, ascending. */
  eventRowsOf(address: string, topic0: string): readonly number[] {
    return this.eventRows.get(`${address.toLowerCase()}|${topic0.toLowerCase()}`) ?? [];
  }
  /** The token standard the contract's logs follow, or null when none showed one. */
  kindOf(address: string): ContractKind | null {
    const e = this.kindEvidence.get(address.toLowerCase());
    if (!e) return null;
    let best = -1;
    for (let k = 0; k < 3; k++) if (e[k]! > 0 && (best < 0 || e[k]! > e[best]!)) best = k;
    return best < 0 ? null : KINDS[best]!;
  }
  /** An address known to hold code: created by a loaded transaction, or emitting logs. */
  isContract(address: string): boolean {
    const a = address.toLowerCase();
    return this.createdContracts.has(a) || this.logCount.has(a);
  }
  /** Addresses whose logs show a token standard. */
  tokenContracts(): string[] {
    return [...this.kindEvidence.keys()].filter((a) => this.kindOf(a) !== null);
  }

  /** Appends the next block; the caller has checked that it is the head's child. */
  append(loaded: LoadedBlock): void {
    const { block } = loaded;
    const head = this.head;
    if (head && (block.block_number !== head.block_number + 1 || block.parent_hash !== head.block_hash)) {
      throw new ReorgDuringLoad(block.block_number, `it does not extend the stored head ${head.block_number} (${head.block_hash})`);
    }
    const index = this.blocks.length;
    this.blocks.push(block);
    this.blockByHash.set(block.block_hash, index);
    this.blockTxStart.push(this.txs.length);
    this.blockLogStart.push(this.logs.length);
    for (const tx of loaded.transactions) {
      const row = this.txs.length;
      this.txs.push(tx);
      this.txByHash.set(tx.hash, row);
      push(this.walletRows, tx.from_address, row);
      if (tx.to_address !== null && tx.to_address !== tx.from_address) push(this.walletRows, tx.to_address, row);
      if (tx.contract_address) this.createdContracts.set(tx.contract_address, block.block_number);
    }
    for (const log of loaded.logs) {
      const row = this.logs.length;
      this.logs.push(log);
      push(this.logsByTx, log.transaction_hash, row);
      if (log.topics[0]) push(this.eventRows, `${log.address}|${log.topics[0]}`, row);
      this.logCount.set(log.address, (this.logCount.get(log.address) ?? 0) + 1);
      this.countKind(log, 1);
    }
    this.version++;
  }

  /** Removes the blocks from `blockNumber` on (a reorganisation); returns how many were removed. */
  truncateFrom(blockNumber: number): number {
    const first = this.firstBlock;
    if (first === null) return 0;
    const index = Math.max(0, blockNumber - first);
    if (index >= this.blocks.length) return 0;
    const removed = this.blocks.length - index;
    const txCut = this.blockTxStart[index]!;
    const logCut = this.blockLogStart[index]!;
    for (let row = this.txs.length - 1; row >= txCut; row--) {
      const tx = this.txs[row]!;
      this.txByHash.delete(tx.hash);
      popFrom(this.walletRows, tx.from_address, txCut);
      if (tx.to_address !== null) popFrom(this.walletRows, tx.to_address, txCut);
      if (tx.contract_address && this.createdContracts.get(tx.contract_address) === tx.block_number)
        this.createdContracts.delete(tx.contract_address);
    }
    for (let row = this.logs.length - 1; row >= logCut; row--) {
      const log = this.logs[row]!;
      this.logsByTx.delete(log.transaction_hash);
      if (log.topics[0]) popFrom(this.eventRows, `${log.address}|${log.topics[0]}`, logCut);
      const n = (this.logCount.get(log.address) ?? 0) - 1;
      if (n > 0) this.logCount.set(log.address, n);
      else this.logCount.delete(log.address);
      this.countKind(log, -1);
    }
    for (let i = index; i < this.blocks.length; i++) this.blockByHash.delete(this.blocks[i]!.block_hash);
    this.txs.length = txCut;
    this.logs.length = logCut;
    this.blocks.length = index;
    this.blockTxStart.length = index;
    this.blockLogStart.length = index;
    this.reorgedBlocks += removed;
    this.version++;
    return removed;
  }

  private countKind(log: EventRecord, delta: 1 | -1): void {
    const kind = kindOfLog(log);
    if (!kind) return;
    let e = this.kindEvidence.get(log.address);
    if (!e) this.kindEvidence.set(log.address, (e = [0, 0, 0]));
    e[KINDS.indexOf(kind)]! += delta;
    if (e[0] <= 0 && e[1] <= 0 && e[2] <= 0) this.kindEvidence.delete(log.address);
  }

  /** NFT holdings replayed from the ERC-721 Transfer and ERC-1155 TransferSingle/TransferBatch logs. */
  holdings(): Holdings {
    if (this.holdingsCache?.version === this.version) return this.holdingsCache.holdings;
    const balances = new Map<string, bigint>();
    const add = (contract: string, id: string, holder: string | null, amount: bigint) => {
      if (!holder || holder === ZERO_ADDRESS) return;
      const key = `${holder}|${contract}|${id}`;
      balances.set(key, (balances.get(key) ?? 0n) + amount);
    };
    for (const log of this.logs) {
      const kind = kindOfLog(log);
      const t = log.topics;
      try {
        if (kind === 'erc721' && t[0] === TOPIC0.Transfer) {
          const id = BigInt(t[3]!).toString();
          add(log.address, id, topicAddress(t[1]), -1n);
          add(log.address, id, topicAddress(t[2]), 1n);
        } else if (t[0] === TOPIC0.TransferSingle && t.length === 4) {
          const [id, value] = decodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], log.data as Hex);
          add(log.address, id.toString(), topicAddress(t[2]), -value);
          add(log.address, id.toString(), topicAddress(t[3]), value);
        } else if (t[0] === TRANSFER_BATCH_TOPIC0 && t.length === 4) {
          const [ids, values] = decodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], log.data as Hex);
          ids.forEach((id, i) => {
            add(log.address, id.toString(), topicAddress(t[2]), -(values[i] ?? 0n));
            add(log.address, id.toString(), topicAddress(t[3]), values[i] ?? 0n);
          });
        }
      } catch {
        // A log that only looks like a token transfer: not a holding.
      }
    }
    const holdings: Holdings = new Map();
    for (const [key, amount] of balances) {
      if (amount <= 0n) continue;
      const [holder, contract, id] = key.split('|') as [string, string, string];
      let byContract = holdings.get(holder);
      if (!byContract) holdings.set(holder, (byContract = new Map<string, Map<string, bigint>>()));
      let ids = byContract.get(contract);
      if (!ids) byContract.set(contract, (ids = new Map<string, bigint>()));
      ids.set(id, amount);
    }
    this.holdingsCache = { version: this.version, holdings };
    return holdings;
  }
}

function cell(kind: ColumnKind, v: unknown): CellValue {
  if (v === null || v === undefined) return null;
  if (kind === 'big') return BigInt(v as string);
  if (kind === 'num') return Number(v);
  return String(v);
}

/**
 * The seeded sandbox's filterable columns (same names, kinds and order semantics) read from the
 * stored records, so the query engine (query.ts) evaluates filters, sort, paging and group_by /
 * aggregate over RPC-loaded rows exactly as over the seeded ones.
 */
export const RPC_TRANSACTION_COLUMNS: ColumnCatalog<ChainStore> = Object.fromEntries(
  Object.entries(TRANSACTION_COLUMNS).map(([name, spec]) => [
    name,
    {
      kind: spec.kind,
      wire: spec.wire,
      monotonic: spec.monotonic,
      get: (s: ChainStore, r: number) => cell(spec.kind, (s.txs[r] as unknown as Record<string, unknown>)[name]),
    },
  ]),
);

export const RPC_EVENT_COLUMNS: ColumnCatalog<ChainStore> = Object.fromEntries(
  Object.entries(EVENT_COLUMNS).map(([name, spec]) => {
    const topic = /^topic_(\d)$/.exec(name);
    const get = topic
      ? (s: ChainStore, r: number) => s.logs[r]!.topics[Number(topic[1])] ?? null
      : (s: ChainStore, r: number) => cell(spec.kind, (s.logs[r] as unknown as Record<string, unknown>)[name]);
    return [name, { kind: spec.kind, wire: spec.wire, monotonic: spec.monotonic, get }];
  }),
);
