/**
 * Issue 8: when the node reorganises, the sandbox's store replaces the orphaned blocks (parent-hash
 * mismatch / other hash at the stored head) with the node's: after a revert to an earlier block
 * followed by a longer different branch, after a same-height reorganisation (anvil_reorg), and when
 * only the background poller is watching. After each, the store is exactly the node's chain:
 * every block hash, every transaction, every log (eth_getLogs), and nothing orphaned is served.
 */
import { encodeFunctionData, parseAbi, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRpcSandbox, type RpcSandbox } from '@insight-export/sandbox/rpc';
import { ChainActivity, ERC20_ARTIFACT } from './helpers/activity.js';
import { useAnvil } from './helpers/anvil.js';

const CHAIN = 31337;
const anvil = useAnvil();
let act: ChainActivity;
/** Syncs only when a test says so: each test decides exactly which node states it sees. */
let sandbox: RpcSandbox;
/** Follows by polling every 50 ms. */
let polled: RpcSandbox;

interface RawBlock {
  hash: string;
  transactions: string[];
}

beforeAll(async () => {
  act = new ChainActivity(anvil, 3);
  await act.init();
  await act.deploy();
  for (let b = 2; b <= 4; b++) await act.block(b, 2);
  sandbox = await startRpcSandbox({ rpc: anvil.url, abis: [`${act.erc20}=${ERC20_ARTIFACT}`], pollMs: 0 });
  polled = await startRpcSandbox({ rpc: anvil.url, pollMs: 50 });
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  await polled?.close();
});

function store(s: RpcSandbox = sandbox) {
  return s.data.store(CHAIN)!;
}

async function nodeHead(): Promise<number> {
  return Number(await anvil.rpc<string>('eth_blockNumber'));
}

/** The store holds exactly the node's canonical chain. */
async function expectTheNodesChain(s: RpcSandbox = sandbox): Promise<void> {
  const head = await nodeHead();
  expect(store(s).head?.block_number).toBe(head);
  const nodeTxs: string[] = [];
  for (let n = 0; n <= head; n++) {
    const b = await anvil.rpc<RawBlock>('eth_getBlockByNumber', [toHex(n), false]);
    expect(store(s).blockAt(n)?.block_hash, `block ${n}`).toBe(b.hash);
    nodeTxs.push(...b.transactions);
  }
  expect(store(s).txs.map((t) => t.hash)).toEqual(nodeTxs);
  const logs = await anvil.rpc<{ transactionHash: string; logIndex: string; blockHash: string }[]>('eth_getLogs', [
    { fromBlock: '0x0', toBlock: 'latest' },
  ]);
  expect(store(s).logs.map((l) => [l.transaction_hash, l.log_index, l.block_hash])).toEqual(
    logs.map((l) => [l.transactionHash, Number(l.logIndex), l.blockHash]),
  );
}

async function resolveType(input: string): Promise<string> {
  const body = (await (await fetch(`${sandbox.url}/resolve/${input}?chain_id=${CHAIN}`)).json()) as { data: { type: string } };
  return body.data.type;
}

async function walletHashes(wallet: string): Promise<string[]> {
  const res = await fetch(`${sandbox.url}/wallets/${wallet}/transactions?chain_id=${CHAIN}&limit=1000&sort_by=block_number`);
  return ((await res.json()) as { data: { hash: string }[] }).data.map((t) => t.hash);
}

const ERC20 = parseAbi(['function transfer(address to, uint256 amount) returns (bool)']);

/** Sends with the node's pending nonce (the activity's own bookkeeping belongs to the orphaned branch). */
async function sendRaw(from: string, tx: Record<string, unknown>): Promise<string> {
  const nonce = await anvil.rpc<string>('eth_getTransactionCount', [from, 'pending']);
  return anvil.rpc<string>('eth_sendTransaction', [{ from, nonce, gas: toHex(200_000), ...tx }]);
}

describe('reorganisations', () => {
  it('a revert to an earlier block, then a longer different branch: the orphaned blocks are replaced', async () => {
    const snapshot = await anvil.rpc<string>('evm_snapshot');
    const forkHead = await nodeHead();
    const before = act.sent.length;
    for (let b = 5; b <= 7; b++) await act.block(b, 2);
    const orphaned = act.sent.slice(before).map((s) => s.hash);
    await sandbox.sync();
    await expectTheNodesChain();
    expect(await resolveType(orphaned[0]!)).toBe('transaction');
    const removedBefore = sandbox.data.chains[0]!.reorgedBlocks;

    expect(await anvil.rpc<boolean>('evm_revert', [snapshot])).toBe(true);
    expect(await nodeHead()).toBe(forkHead);
    const branch: string[] = [];
    for (let k = 0; k < 4; k++) {
      const [from, to] = [act.accounts[k]!, act.accounts[k + 1]!];
      branch.push(await sendRaw(from, { to, value: toHex(10n ** 16n) }));
      branch.push(
        await sendRaw(act.accounts[0]!, {
          to: act.erc20,
          data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to as `0x${string}`, 12345n + BigInt(k)] }),
        }),
      );
      await anvil.mine();
    }
    await sandbox.sync();
    await expectTheNodesChain();
    expect(sandbox.data.chains[0]!.reorgedBlocks - removedBefore).toBe(3);
    for (const h of orphaned) expect(await resolveType(h)).not.toBe('transaction');
    for (const h of branch) expect(await resolveType(h)).toBe('transaction');
    const served = await walletHashes(act.accounts[0]!);
    for (const h of orphaned) expect(served).not.toContain(h);
    expect(served).toEqual(expect.arrayContaining(branch.filter((_, i) => i % 2 === 1)));
  });

  it('a same-height reorganisation (anvil_reorg): the replaced blocks get the node’s new hashes', async () => {
    await sandbox.sync();
    const head = await nodeHead();
    const oldHashes = [head - 1, head].map((n) => store().blockAt(n)!.block_hash);
    const oldTxs = [head - 1, head].flatMap((n) =>
      store()
        .txs.filter((t) => t.block_number === n)
        .map((t) => t.hash),
    );
    expect(oldTxs.length).toBeGreaterThan(0);
    const removedBefore = sandbox.data.chains[0]!.reorgedBlocks;
    await anvil.rpc('anvil_reorg', [2, []]);
    expect(await nodeHead()).toBe(head);
    await sandbox.sync();
    await expectTheNodesChain();
    expect(sandbox.data.chains[0]!.reorgedBlocks - removedBefore).toBe(2);
    expect([head - 1, head].map((n) => store().blockAt(n)!.block_hash)).not.toEqual(oldHashes);
    for (const h of oldTxs) expect(await resolveType(h)).not.toBe('transaction');
  });

  it('the background poller alone follows new blocks and replaces a reorganised head', async () => {
    const waitFor = async (cond: () => boolean) => {
      const until = Date.now() + 10_000;
      while (!cond()) {
        if (Date.now() > until) throw new Error('the poller did not catch up in 10 s');
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await sendRaw(act.accounts[1]!, { to: act.accounts[2], value: toHex(1000) });
    const head = await anvil.mine();
    const mined = (await anvil.rpc<RawBlock>('eth_getBlockByNumber', [toHex(head), false])).hash;
    await waitFor(() => store(polled).blockAt(head)?.block_hash === mined);
    await anvil.rpc('anvil_reorg', [1, []]);
    const fresh = (await anvil.rpc<RawBlock>('eth_getBlockByNumber', [toHex(head), false])).hash;
    expect(fresh).not.toBe(mined);
    await waitFor(() => store(polled).blockAt(head)?.block_hash === fresh);
    await expectTheNodesChain(polled);
    expect(polled.data.chains[0]!.reorgedBlocks).toBeGreaterThan(0);
  });
});
