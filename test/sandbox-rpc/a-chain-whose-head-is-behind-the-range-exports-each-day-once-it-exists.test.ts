/**
 * A real chain whose head lies inside a past time range (anvil started on 2024-01-01, its head on
 * 2024-01-02, a job over 2024-01-01..2024-01-10, long before the clock): the run exports up to the
 * head minus the safety lag and commits nothing after it; the transactions the chain gets later
 * (on the 5th and the 8th) are exported by the next run, and `verify` says what is still missing
 * until then. Before, every window to the 10th was committed empty and those rows were never
 * exported.
 */
import { join } from 'node:path';
import { toHex } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRpcSandbox, type RpcSandbox } from '@insight-export/sandbox/rpc';
import { exportJob, readTable } from '../helpers/export.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { useAnvil } from './helpers/anvil.js';

const CHAIN = 31337;
const DAY = 86_400;
const JAN1 = Date.UTC(2024, 0, 1) / 1000;
const anvil = useAnvil({ args: ['--timestamp', String(JAN1)] });
const tmp = useTempDir('anvil-behind-');
let sandbox: RpcSandbox;
let from: string;
let to: string;

/** One block at `time` holding a payment from account 0 to account 1; its hash. */
async function payAt(time: number): Promise<string> {
  await anvil.rpc('evm_setNextBlockTimestamp', [toHex(time)]);
  const hash = await anvil.rpc<string>('eth_sendTransaction', [{ from, to, value: toHex(1000 + time - JAN1) }]);
  await anvil.mine();
  return hash.toLowerCase();
}

/** Until the sandbox serves the node's head. */
async function followed(): Promise<void> {
  const head = Number(await anvil.rpc<string>('eth_blockNumber'));
  const until = Date.now() + 15_000;
  while ((sandbox.data.store(CHAIN)?.head?.block_number ?? -1) < head) {
    if (Date.now() > until) throw new Error(`the sandbox did not follow the node to block ${head}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  [from = '', to = ''] = await anvil.rpc<string[]>('eth_accounts');
  sandbox = await startRpcSandbox({ rpc: anvil.url, pollMs: 50 });
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

it('exports up to the head now and the days the chain reaches later in later runs', { timeout: 60_000 }, async () => {
  const early = [await payAt(JAN1 + 3_600), await payAt(JAN1 + 7_200), await payAt(JAN1 + DAY + 3_600)];
  // The head: an empty block in the afternoon of the 2nd.
  await anvil.rpc('evm_setNextBlockTimestamp', [toHex(JAN1 + DAY + 50_000)]);
  await anvil.mine();
  await followed();

  const dest = join(tmp.dir, 'out');
  const job = {
    name: 'behind',
    source: { base_url: 'sandbox', chains: [CHAIN] },
    targets: [{ wallet: to, datasets: ['transactions'] }],
    range: { from: '2024-01-01', to: '2024-01-10', chunk: '1d' },
    output: { format: 'ndjson' },
  };
  const run = () => exportJob({ job, dir: tmp.dir, sandbox: { url: sandbox.url, explorerUrl: sandbox.explorerUrl }, destination: dest });
  const hashes = async () => (await readTable(dest, 'transactions', 'ndjson')).map((r) => r.hash).sort();

  const first = await run();
  expect(first.status).toBe('succeeded');
  const end = JAN1 + DAY + 50_000 - 900 + 1;
  expect(first.range_clamped).toEqual([{ chain_id: CHAIN, to: JAN1 + 9 * DAY, end, lag: JAN1 + 9 * DAY - end, lag_unit: 'seconds' }]);
  expect(first.windows.done).toBe(2);
  expect(await hashes()).toEqual([...early].sort());

  // The chain goes on: payments on the 5th and the 8th, and a head past the range's end.
  const later = [await payAt(JAN1 + 4 * DAY + 600), await payAt(JAN1 + 7 * DAY + 600)];
  await anvil.rpc('evm_setNextBlockTimestamp', [toHex(JAN1 + 9 * DAY + 3_600)]);
  await anvil.mine();
  await followed();

  const second = await run();
  expect(second.status).toBe('succeeded');
  expect(second.range_clamped).toEqual([]);
  expect(second.rows).toBe(2);
  expect(await hashes()).toEqual([...early, ...later].sort());
  expect((await run()).windows.planned).toBe(0);
});
