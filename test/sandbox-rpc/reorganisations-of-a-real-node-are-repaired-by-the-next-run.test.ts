/**
 * Issue 16 against a real node: anvil mines ERC-20 transfers and ether payments across blocks,
 * `sandbox --rpc` follows it by polling, and a cron-like job (`to: latest`, no safety lag, a
 * reorganisation horizon covering the fork) exports wallet transactions and the token's Transfer
 * events. The node then reorganises: evm_revert to an earlier block and a longer branch with other
 * transactions, or anvil_reorg replacing the newest blocks at the same height with other transactions. Once the sandbox has
 * followed, the next run (no operator action) names the reorganisation in its report (fork, depth,
 * windows exported again) and leaves files equal, byte for byte and row for row, to a fresh export
 * of the new branch; nothing of the orphaned blocks remains.
 */
import { join } from 'node:path';
import { encodeFunctionData, parseAbi, toHex } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventTableForSignature } from '../../src/datasets/events.js';
import type { RunReport } from '../../src/run/report.js';
import { startRpcSandbox, type RpcSandbox } from '@insight-export/sandbox/rpc';
import { exportJob, readTable, type CanonRow } from '../helpers/export.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { readNdjsonExport } from '../reliability/harness.js';
import { ChainActivity } from './helpers/activity.js';
import { useAnvil } from './helpers/anvil.js';

const CHAIN = 31337;
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const CHUNK = 2;
const HORIZON = 16;
const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

const anvil = useAnvil();
const tmp = useTempDir('anvil-reorg-repair-');
let act: ChainActivity;
let sandbox: RpcSandbox;

beforeAll(async () => {
  act = new ChainActivity(anvil, 4);
  await act.init();
  await act.deploy();
  for (let b = 2; b <= 4; b++) await act.block(b, 2);
  sandbox = await startRpcSandbox({ rpc: anvil.url, pollMs: 50 });
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

async function nodeHead(): Promise<number> {
  return Number(await anvil.rpc<string>('eth_blockNumber'));
}

async function nodeHash(n: number): Promise<string> {
  return (await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [toHex(n), false])).hash;
}

/** Until the sandbox serves the node's current chain, block hash for block hash. */
async function waitForTheSandbox(): Promise<number> {
  const head = await nodeHead();
  const hashes: string[] = [];
  for (let n = 0; n <= head; n++) hashes.push(await nodeHash(n));
  const until = Date.now() + 15_000;
  const store = () => sandbox.data.store(CHAIN);
  while (!hashes.every((h, n) => store()?.blockAt(n)?.block_hash === h)) {
    if (Date.now() > until) throw new Error(`the sandbox did not follow the node to block ${head} in 15 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return head;
}

/** Sends with the node's pending nonce (the activity's own bookkeeping belongs to the orphaned branch). */
async function sendRaw(from: string, tx: Record<string, unknown>): Promise<string> {
  const nonce = await anvil.rpc<string>('eth_getTransactionCount', [from, 'pending']);
  return (await anvil.rpc<string>('eth_sendTransaction', [{ from, nonce, gas: toHex(200_000), ...tx }])).toLowerCase();
}

/** A block of the new branch: account 0 pays each wallet tokens and one ether payment between wallets. */
async function branchBlock(k: number): Promise<string[]> {
  const sent: string[] = [];
  for (const to of act.accounts.slice(1)) {
    const data = encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to as `0x${string}`, 777_000n + BigInt(k)] });
    sent.push(await sendRaw(act.accounts[0]!, { to: act.erc20, data }));
  }
  sent.push(await sendRaw(act.accounts[1]!, { to: act.accounts[2], value: toHex(10n ** 15n + BigInt(k)) }));
  await anvil.mine();
  return sent;
}

function job(name: string): Record<string, unknown> {
  const wallets = act.accounts.slice(0, 3);
  return {
    name,
    source: { base_url: sandbox.url, chains: [CHAIN] },
    targets: [...wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })), { contract: act.erc20, events: [TRANSFER] }],
    range: { from: 0, to: 'latest', safety_lag: 0, chunk: CHUNK, reorg_horizon: HORIZON },
  };
}

async function run(name: string, out: string): Promise<RunReport> {
  return exportJob({ dir: join(tmp.dir, `job-${name}`), destination: out, flags: { format: 'ndjson' }, job: job(name) });
}

async function rows(out: string): Promise<Record<string, CanonRow[]>> {
  const byItem = (a: CanonRow, b: CanonRow) => String(a.item_id).localeCompare(String(b.item_id));
  return {
    transactions: (await readTable(out, 'transactions', 'ndjson')).sort(byItem),
    events: (await readTable(out, eventTableForSignature(TRANSFER), 'ndjson')).sort(byItem),
  };
}

/** The destination equals a fresh export of the node's current chain: same files, rows, item_ids and fields. */
async function expectEqualToFreshExport(out: string, label: string): Promise<Record<string, CanonRow[]>> {
  const freshOut = join(tmp.dir, `fresh-${label}`);
  const fresh = await run('anvil-reorg', freshOut);
  expect(fresh.status, JSON.stringify(fresh.failed ?? fresh).slice(0, 2000)).toBe('succeeded');
  const want = readNdjsonExport(freshOut);
  const got = readNdjsonExport(out);
  expect(got.itemIds.slice().sort()).toEqual(want.itemIds.slice().sort());
  expect(got.files).toEqual(want.files);
  const [gotRows, wantRows] = [await rows(out), await rows(freshOut)];
  expect(gotRows).toEqual(wantRows);
  return gotRows;
}

function hashesIn(r: Record<string, CanonRow[]>): Set<string> {
  return new Set([...r.transactions!.map((t) => t.hash as string), ...r.events!.map((e) => e.transaction_hash as string)]);
}

/** The report names one reorganisation per unit: the fork right after `forkAfter`, the edge of the old head changed, its windows exported again. */
function expectReorgReported(report: RunReport, oldHead: number, forkAfter: number): void {
  expect(report.status).toBe('succeeded');
  const units = 4;
  expect(report.reorgs!.length).toBe(units);
  for (const r of report.reorgs!) {
    expect(r.chain_id).toBe(CHAIN);
    expect(r.newest_block).toBe(oldHead);
    expect(r.fork_after_block).not.toBeNull();
    // Every block of this chain holds rows of the job: the fork is placed exactly.
    expect(r.fork_after_block).toBe(forkAfter);
    expect(r.first_changed_block).toBe(forkAfter + 1);
    expect(r.depth_exact).toBe(true);
    expect(r.depth_at_most).toBe(oldHead - r.fork_after_block!);
    expect(r.changed_edges[0]!.block_number).toBe(oldHead);
    expect(r.windows.length).toBeGreaterThan(0);
    // The windows exported again start at or below the first replaced block and all lie above the fork.
    expect(r.windows[0]!.start).toBeLessThanOrEqual(r.first_changed_block);
    expect(r.windows.every((w) => w.end > r.fork_after_block! + 1)).toBe(true);
    expect(r.depth).toBe(oldHead - r.first_changed_block + 1);
  }
  expect(report.windows_reexported).toBe(report.reorgs!.reduce((n, r) => n + r.windows.length, 0));
  expect(report.windows.done).toBe(report.windows.planned);
}

it(
  'a revert and a longer different branch, then a same-height anvil_reorg: each repaired by the next run, exactly',
  { timeout: 120_000 },
  async () => {
    const out = join(tmp.dir, 'out');
    const forkHead = await nodeHead();
    const snapshot = await anvil.rpc<string>('evm_snapshot');
    const before = act.sent.length;
    for (let b = forkHead + 1; b <= forkHead + 2; b++) await act.block(b, 2);
    const orphaned = act.sent.slice(before).map((s) => s.hash);
    const firstHead = await waitForTheSandbox();

    const first = await run('anvil-reorg', out);
    expect(first.status).toBe('succeeded');
    expect(first.reorgs).toEqual([]);
    const firstRows = await rows(out);
    expect(orphaned.filter((h) => hashesIn(firstRows).has(h)).length).toBeGreaterThan(0);

    // The revert and a branch one block longer, with other transactions.
    expect(await anvil.rpc<boolean>('evm_revert', [snapshot])).toBe(true);
    const branch: string[] = [];
    for (let k = 0; k < 3; k++) branch.push(...(await branchBlock(k)));
    expect(await waitForTheSandbox()).toBe(firstHead + 1);

    const repaired = await run('anvil-reorg', out);
    expectReorgReported(repaired, firstHead, forkHead);
    const afterRevert = await expectEqualToFreshExport(out, 'revert');
    for (const h of orphaned) expect(hashesIn(afterRevert).has(h), `orphaned ${h}`).toBe(false);
    for (const h of branch) expect(hashesIn(afterRevert).has(h), `branch ${h}`).toBe(true);
    console.log(
      `[anvil reorg] revert to block ${forkHead} and a branch to ${firstHead + 1}: fork after ${repaired.reorgs![0]!.fork_after_block}, first replaced block ${repaired.reorgs![0]!.first_changed_block}, depth ${repaired.reorgs![0]!.depth}${repaired.reorgs![0]!.depth_exact ? ' exactly' : ` to ${repaired.reorgs![0]!.depth_at_most}`}, ` +
        `${repaired.windows_reexported} windows exported again; equals a fresh export (${afterRevert.transactions!.length} transactions, ${afterRevert.events!.length} events)`,
    );

    // Same height: the two newest blocks replaced by blocks with other transactions.
    const head = await nodeHead();
    const txsOf = async (n: number) =>
      (await anvil.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [toHex(n), false])).transactions.map((h) => h.toLowerCase());
    const replacedTxs = [...(await txsOf(head - 1)), ...(await txsOf(head))];
    expect(replacedTxs.length).toBeGreaterThan(0);
    const oldHash = await nodeHash(head);
    const [a0, a1, a2] = act.accounts as [string, string, string];
    const tokenTransfer = encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [a0 as `0x${string}`, 4242n] });
    await anvil.rpc('anvil_reorg', [
      2,
      [
        [{ from: a1, to: a2, value: toHex(31337n), gas: toHex(21_000) }, 0],
        [{ from: a2, to: act.erc20, data: tokenTransfer, gas: toHex(200_000) }, 1],
      ],
    ]);
    expect(await nodeHead()).toBe(head);
    expect(await nodeHash(head)).not.toBe(oldHash);
    const replacements = [...(await txsOf(head - 1)), ...(await txsOf(head))];
    expect(replacements.length).toBe(2);
    await waitForTheSandbox();

    const sameHeight = await run('anvil-reorg', out);
    expectReorgReported(sameHeight, head, head - 2);
    const afterReorg = await expectEqualToFreshExport(out, 'same-height');
    for (const h of replacedTxs) expect(hashesIn(afterReorg).has(h), `replaced ${h}`).toBe(false);
    for (const h of replacements) expect(hashesIn(afterReorg).has(h), `replacement ${h}`).toBe(true);
    expect(afterReorg.events!.some((e) => replacements.includes(e.transaction_hash as string) && e.arg_value === '4242')).toBe(true);
    console.log(
      `[anvil reorg] anvil_reorg of blocks ${head - 1}..${head} (${replacedTxs.length} transactions replaced by 2): fork after ${sameHeight.reorgs![0]!.fork_after_block}, ` +
        `${sameHeight.windows_reexported} windows exported again; equals a fresh export (${afterReorg.transactions!.length} transactions, ${afterReorg.events!.length} events)`,
    );

    const quiet = await run('anvil-reorg', out);
    expect(quiet.reorgs).toEqual([]);
    expect(quiet.windows.planned).toBe(0);
  },
);
