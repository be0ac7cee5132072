/**
 * `verify --chain-hashes`: are the exported windows still the service's chain? For every completed
 * window, the block recorded at its edge (WindowRecord.edge) is asked again; and the rows of its
 * files (NDJSON or Parquet) are read and each distinct (block_number, block_hash) compared with
 * the service's block (all blocks, or at most `sample` per window, spread evenly). Every window that disagrees
 * is named. One request per distinct block (cached).
 */
import { isSnapshotUnitKey } from '../datasets/index.js';
import type { BlockLookup } from '../source/block-by-number.js';
import type { ObjectStore } from '../store/store.js';
import type { WindowState } from './window-state.js';
import { readBlockHashes } from './exported-files.js';

export interface ChainHashProblem {
  unit: string;
  window: [number, number];
  key?: string;
  message: string;
}

export interface ChainHashReport {
  windows_checked: number;
  edges_checked: number;
  /** Distinct blocks of rows compared with the service. */
  row_blocks_checked: number;
  /** Files whose rows could not be read (verify names them as missing or unreadable). */
  files_unreadable: number;
  sample: number | null;
  problems: ChainHashProblem[];
}

export async function verifyChainHashes(opts: {
  store: ObjectStore;
  state: WindowState;
  blocks: BlockLookup;
  sample?: number | null;
}): Promise<ChainHashReport> {
  const report: ChainHashReport = {
    windows_checked: 0,
    edges_checked: 0,
    row_blocks_checked: 0,
    files_unreadable: 0,
    sample: opts.sample ?? null,
    problems: [],
  };
  for await (const rec of opts.state.completedRecords()) {
    const m = /\/(\d+)\/(block|time)$/.exec(rec.unit_key);
    if (!m || isSnapshotUnitKey(rec.unit_key)) continue;
    const chainId = Number(m[1]);
    const window: [number, number] = [rec.start, rec.end];
    report.windows_checked++;
    if (rec.edge) {
      report.edges_checked++;
      const now = await opts.blocks.block(chainId, rec.edge.block_number);
      if (now?.block_hash !== rec.edge.block_hash) {
        report.problems.push({
          unit: rec.unit_key,
          window,
          message: `edge block ${rec.edge.block_number} was ${rec.edge.block_hash}, the service now has ${now?.block_hash ?? 'no such block'}`,
        });
      }
    }
    const rows = await readBlockHashes(
      opts.store,
      rec.files.map((f) => f.key),
    );
    const seen = rows.hashes;
    report.files_unreadable += rows.unreadable.length;
    for (const c of rows.conflicts) {
      report.problems.push({
        unit: rec.unit_key,
        window,
        key: c.key,
        message: `rows of block ${c.block} carry two hashes: ${c.hashes[0]} and ${c.hashes[1]}`,
      });
    }
    let blocks = [...seen.keys()].sort((a, b) => a - b);
    if (opts.sample && blocks.length > opts.sample) {
      const step = blocks.length / opts.sample;
      blocks = Array.from({ length: opts.sample }, (_, i) => blocks[Math.floor(i * step)]!);
    }
    const wrong: string[] = [];
    for (const n of blocks) {
      report.row_blocks_checked++;
      const now = await opts.blocks.block(chainId, n);
      const had = seen.get(n)!;
      if (now?.block_hash !== had.hash)
        wrong.push(`block ${n}: rows have ${had.hash}, the service ${now?.block_hash ?? 'no such block'} (${had.key})`);
    }
    if (wrong.length > 0) {
      report.problems.push({
        unit: rec.unit_key,
        window,
        message: `${wrong.length} block(s) of its rows are no longer the service's: ${wrong.slice(0, 3).join('; ')}${wrong.length > 3 ? ' ...' : ''}`,
      });
    }
  }
  return report;
}
