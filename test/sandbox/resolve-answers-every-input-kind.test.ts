import { describe, expect, it } from 'vitest';
import { TOPIC0 } from '@insight-export/sandbox';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 4_000, seed: 8 });
const resolve = (input: string, qs = '') => getJson(`${sandbox.url}/resolve/${encodeURIComponent(input)}${qs}`);

describe('resolve', () => {
  it('a decimal number -> the block on each chain that has it (chain_id a number)', async () => {
    const chain = sandbox.data.chains[1]!;
    const n = chain.firstBlock + 5;
    const { status, body } = await resolve(String(n));
    expect(status).toBe(200);
    expect(body.data.type).toBe('block');
    expect(body.data.blocks).toEqual([sandbox.data.block(chain.chainId, n)]);
    expect(typeof body.data.blocks[0].chain_id).toBe('number');
  });

  it('a transaction hash -> the transaction (chain_id a string) and its log', async () => {
    const tx = [...sandbox.data.transactions(42161)].find((t) => t.function_selector === '0xa9059cbb' && t.status === 1)!;
    const { body } = await resolve(tx.hash);
    expect(body.data.type).toBe('transaction');
    expect(body.data.transactions).toEqual([{ ...tx, chain_id: '42161' }]);
    expect(body.data.events).toHaveLength(1);
    expect(body.data.events[0].transaction_hash).toBe(tx.hash);
  });

  it('a block hash -> the block', async () => {
    const block = sandbox.data.block(1, sandbox.data.chains[0]!.headBlock)!;
    const { body } = await resolve(block.block_hash);
    expect(body.data.type).toBe('block');
    expect(body.data.blocks).toEqual([block]);
  });

  it('a known topic0 -> event_signature with some events carrying it', async () => {
    const { body } = await resolve(TOPIC0.TransferSingle, '?chain_id=1');
    expect(body.data.type).toBe('event_signature');
    expect(body.data.events.length).toBeGreaterThan(0);
    for (const e of body.data.events) {
      expect(e.topics[0]).toBe(TOPIC0.TransferSingle);
      expect(e.chain_id).toBe('1');
    }
  });

  it('an unknown 66-char hash -> unknown', async () => {
    const { status, body } = await resolve('0x' + '12'.repeat(32));
    expect(status).toBe(200);
    expect(body.data.type).toBe('unknown');
  });

  it('an EOA -> address; a contract -> contract with its latest transactions', async () => {
    const alice = sandbox.data.wallets[0]!;
    const eoa = await resolve(alice.address.toUpperCase().replace('0X', '0x'));
    expect(eoa.body.data).toMatchObject({ type: 'address', address: alice.address });
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 8453)!;
    const { body } = await resolve(token.address);
    expect(body.data.type).toBe('contract');
    expect(body.data.address).toBe(token.address);
    expect(body.data.transactions.length).toBeGreaterThan(0);
    const latest = [...sandbox.data.transactions(8453)].filter((t) => t.to_address === token.address).at(-1)!;
    expect(body.data.transactions[0].hash).toBe(latest.hash);
  });

  it('a 4-byte selector -> function_signature with transactions using it', async () => {
    const { body } = await resolve('0x095ea7b3');
    expect(body.data.type).toBe('function_signature');
    expect(body.data.transactions.length).toBeGreaterThan(0);
    for (const t of body.data.transactions) expect(t.function_selector).toBe('0x095ea7b3');
  });

  it('a known name -> its address; anything else -> 400', async () => {
    const { body } = await resolve('bob.eth');
    expect(body.data).toMatchObject({ type: 'address', address: sandbox.data.wallets[1]!.address });
    for (const bad of ['nobody.eth', '0x12345', 'hello', '-5', '0xzz' + '0'.repeat(38)]) {
      const res = await resolve(bad);
      expect(res.status, bad).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error']);
    }
  });
});
