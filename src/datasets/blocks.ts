/**
 * The blocks dataset: the block headers of a block range, one row per block and chain, from
 * `resolve/<block number>`. It needs no wallet or contract: its target is a chain target.
 *
 * Cost: one request per block number for up to source.chain_ids_per_request chains at once (the
 * answer lists the block of every chain asked), so a window of n blocks costs n requests for each
 * batch of that many chains, whatever its rows. Block
 * ranges only: the service has no list of blocks by time.
 */
import { InsightExportError, InterruptedError } from '../errors.js';
import type { InsightClient } from '../source/client.js';
import { tagFailedChain } from '../source/errors.js';
import type { ChainDone, RecordPage } from '../source/paginator.js';
import { chainIdBatches } from '../source/query.js';
import type { BlockRecord } from '../source/records.js';
import type { RowOf } from '../columns/columns.js';
import { BLOCK_HEADER_FIELDS } from '../columns/record-fields.js';
import { BLOCK_COLUMNS, blockTime, type Dataset, type WindowRequest } from './dataset.js';

/** A chain target holds nothing: the chain of each unit is all there is to it. */
export type BlocksTarget = Record<string, never>;

const BLOCKS_COLUMNS = [...BLOCK_COLUMNS, ...BLOCK_HEADER_FIELDS] as const;

type BlockRow = RowOf<typeof BLOCKS_COLUMNS>;

/** A block number of the window the service answered without the block of a chain asked for. */
export class BlockNotServedError extends InsightExportError {
  override name = 'BlockNotServedError';
}

/** resolve requests a window keeps in flight (answers are used in block order). */
const BLOCKS_AHEAD = 8;
/** Blocks per chain handed to the writer at once. */
const BLOCKS_PER_BATCH = 100;

/** The block `n` of each chain of `chainIds`, from one resolve request. */
async function blocksAt(client: InsightClient, chainIds: number[], n: number): Promise<BlockRecord[]> {
  const res = await client.resolve(String(n), { chainIds });
  return chainIds.map((chainId) => {
    const block = res.data.blocks.find((b) => b.chain_id === chainId && b.block_number === n);
    if (!block) {
      throw tagFailedChain(
        new BlockNotServedError(`Block ${n} of chain ${chainId} is not known to the service`, {
          details: `resolve/${n} for chains ${chainIds.join(', ')} listed no block of chain ${chainId}`,
          hint: 'Start the range at a block the chain has (the service may not index it from genesis).',
        }),
        chainId,
      );
    }
    return block;
  });
}

async function* streamBlocks(client: InsightClient, req: WindowRequest): AsyncGenerator<RecordPage<BlockRecord> | ChainDone> {
  for (const chainIds of chainIdBatches(req.chainIds, client.chainIdsPerRequest)) {
    const asked: Promise<BlockRecord[]>[] = [];
    let next = req.start;
    const ask = () => {
      const p = blocksAt(client, chainIds, next++);
      // Awaited in order below; until then a failure must not count as unhandled.
      p.catch(() => undefined);
      asked.push(p);
    };
    let held = chainIds.map((): BlockRecord[] => []);
    for (let n = req.start; n < req.end; n++) {
      if (req.signal?.aborted) throw new InterruptedError(String(req.signal.reason ?? 'signal'));
      while (next < req.end && asked.length < BLOCKS_AHEAD) ask();
      const blocks = await asked.shift()!;
      blocks.forEach((b, i) => held[i]!.push(b));
      if (held[0]!.length >= BLOCKS_PER_BATCH || n === req.end - 1) {
        for (const [i, chainId] of chainIds.entries()) yield { chainId, records: held[i]! };
        held = chainIds.map(() => []);
      }
    }
    for (const chainId of chainIds) yield { chainId, done: true };
  }
}

export const blocksDataset: Dataset<BlocksTarget, BlockRecord, 'blocks', 'chain'> = {
  name: 'blocks',
  capabilities: {
    targetKinds: ['chain'],
    defaultFor: [],
    extent: 'ranged',
    rangeAxes: ['block'],
    requestServes: 'block',
    filters: 'none',
  },
  buildTarget: () => ({}),
  tableName: () => 'blocks',
  columns: () => [...BLOCKS_COLUMNS],
  sortKey: ['chain_id', 'block_number'],
  targetKey: () => 'chain',
  collection: {
    kind: 'streamed',
    streamWindow: (client, _target, req) => streamBlocks(client, req),
  },
  position: (r) => r,
  chainId: (r) => r.chain_id,
  itemId: (r) => `${r.chain_id}:${r.block_number}`,
  rowKey: (r) => String(r.block_number),
  toRow(r): BlockRow {
    return {
      item_id: `${r.chain_id}:${r.block_number}`,
      chain_id: r.chain_id,
      block_number: r.block_number,
      block_timestamp: r.block_timestamp,
      block_time: blockTime(r.block_timestamp),
      block_hash: r.block_hash,
      parent_hash: r.parent_hash,
      miner: r.miner,
      gas_limit: r.gas_limit,
      gas_used: r.gas_used,
      base_fee_per_gas: r.base_fee_per_gas,
      transaction_count: r.transaction_count,
      size: r.size,
      nonce: r.nonce,
      difficulty: r.difficulty,
      total_difficulty: r.total_difficulty,
      sha3_uncles: r.sha3_uncles,
      mix_hash: r.mix_hash,
      state_root: r.state_root,
      transactions_root: r.transactions_root,
      receipts_root: r.receipts_root,
      withdrawals_root: r.withdrawals_root,
      logs_bloom: r.logs_bloom,
      extra_data: r.extra_data,
    };
  },
};
