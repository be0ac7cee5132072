/**
 * A dataset that needs no wallet or contract: a chain target (`datasets: [blocks]`, no wallet or
 * contract) exports the block headers of a block range from resolve/<n>, one row per block, read
 * by DuckDB with the columns the dataset declares and the values the sandbox serves; a second run
 * finds every window done, and after a reorganisation of the chain's newest blocks the next run
 * exports again the windows whose edge changed, so the rows are the new branch's.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { reorganise } from '@insight-export/sandbox';
import { duckdb, exportJob, tableSource } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 7, transactions: 4_000 });
const tmp = useTempDir('chain-target-blocks-');
const CHAIN = 8453;
const BLOCKS = 45;

/** The blocks the sandbox serves now, as DuckDB reads them from the export. */
function served(from: number, to: number) {
  return Array.from({ length: to - from }, (_, i) => {
    const b = sandbox.data.block(CHAIN, from + i)!;
    return {
      chain_id: BigInt(CHAIN),
      block_number: BigInt(b.block_number),
      block_hash: b.block_hash,
      parent_hash: b.parent_hash,
      miner: b.miner,
      gas_used: b.gas_used === null ? null : BigInt(b.gas_used),
      block_time: new Date(b.block_timestamp * 1000).toISOString(),
    };
  });
}

async function exported(root: string) {
  return duckdb(
    `SELECT chain_id, block_number, block_hash, parent_hash, miner, gas_used, strftime(block_time, '%Y-%m-%dT%H:%M:%S.000Z') AS block_time
     FROM ${tableSource(root, 'blocks', 'parquet')} ORDER BY block_number`,
  );
}

it('exports the blocks of a block range for a chain target, resumes, and repairs a reorganisation', { timeout: 120_000 }, async () => {
  const head = sandbox.data.chain(CHAIN)!.headBlock;
  const from = head + 1 - BLOCKS;
  const out = join(tmp.dir, 'out');
  const job = {
    name: 'chain-blocks',
    source: { base_url: 'sandbox', chains: [CHAIN] },
    targets: [{ datasets: ['blocks'] }],
    range: { from, to: 'latest', safety_lag: 0, chunk: 10 },
    output: { format: 'parquet', destination: out },
  };
  const run = () => exportJob({ dir: tmp.dir, destination: out, sandbox, job });

  const first = await run();
  expect(first.status).toBe('succeeded');
  expect(first.rows).toBe(BLOCKS);
  const columns = await duckdb(`DESCRIBE SELECT * FROM ${tableSource(out, 'blocks', 'parquet')}`);
  expect(columns.slice(0, 8).map((c) => [c.column_name, c.column_type])).toEqual([
    ['item_id', 'VARCHAR'],
    ['chain_id', 'BIGINT'],
    ['block_number', 'BIGINT'],
    ['block_timestamp', 'BIGINT'],
    ['block_time', 'TIMESTAMP WITH TIME ZONE'],
    ['block_hash', 'VARCHAR'],
    ['parent_hash', 'VARCHAR'],
    ['miner', 'VARCHAR'],
  ]);
  expect(await exported(out)).toEqual(served(from, head + 1));

  const again = await run();
  expect(again.windows.planned).toBe(0);

  reorganise(sandbox.data, CHAIN, 12);
  const repaired = await run();
  expect(repaired.status).toBe('succeeded');
  expect(repaired.windows.done).toBeGreaterThan(0);
  expect(await exported(out)).toEqual(served(from, head + 1));
});
