import { describe, expect, it } from 'vitest';
import { getJson, useSandbox } from '../helpers/sandbox.js';

const sandbox = useSandbox({ transactions: 5_000, seed: 17 });

async function postDecode(contract: string, body: unknown, qs = '') {
  const res = await fetch(`${sandbox.url}/decode/${contract}${qs}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('POST decode', () => {
  it('decodes calldata and logs of a known contract positionally', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc1155' && c.chainId === 1)!;
    const txs = [...sandbox.data.transactions(1)].filter((t) => t.to_address === token.address && t.status === 1).slice(0, 5);
    const logs = [...sandbox.data.logs(1)].filter((l) => l.address === token.address).slice(0, 5);
    const { status, body } = await postDecode(token.address, {
      transactions: [...txs.map((t) => ({ data: t.data })), { data: '0xdeadbeef' }],
      logs: logs.map((l) => ({ topics: l.topics, data: l.data })),
    });
    expect(status).toBe(200);
    expect(body.data.transactions).toHaveLength(txs.length + 1);
    txs.forEach((t, i) => {
      const args = sandbox.data.transactionArgs(1, t.hash)!;
      expect(body.data.transactions[i]).toEqual({
        data: t.data,
        function_name: 'safeTransferFrom',
        args: [args.args.from, args.args.to, args.args.id, args.args.value, args.args.data],
      });
    });
    expect(body.data.transactions.at(-1)).toEqual({ data: '0xdeadbeef', function_name: null, args: [] });
    logs.forEach((l, i) => {
      const a = sandbox.data.logArgs(1, l.transaction_hash)!.args;
      expect(body.data.logs[i]).toEqual({
        topics: l.topics,
        data: l.data,
        event_name: 'TransferSingle',
        args: [a.operator, a.from, a.to, a.id, a.value],
      });
    });
  });

  it('404s for the unknown contract and for addresses without an ABI; 400 for a bad body', async () => {
    const unknown = sandbox.data.contracts.find((c) => c.kind === 'unknown')!;
    expect((await postDecode(unknown.address, { transactions: [] })).status).toBe(404);
    expect((await postDecode(sandbox.data.wallets[0]!.address, { transactions: [] })).status).toBe(404);
    const erc20 = sandbox.data.contracts.find((c) => c.kind === 'erc20')!;
    const bad = await postDecode(erc20.address, '{not json');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['error']);
    expect((await postDecode(erc20.address, { logs: [{ topics: 'x', data: '0x' }] })).status).toBe(400);
  });
});

describe('decode=true on list routes', () => {
  it('fills decoded for token calls from the to_address ABI, null for plain transfers and the unknown contract', async () => {
    const alice = sandbox.data.wallets[0]!;
    const { body } = await getJson(
      `${sandbox.url}/wallets/${alice.address}/transactions?chain_id=1&limit=400&sort_by=block_number&decode=true`,
    );
    let decoded = 0;
    for (const row of body.data) {
      const args = sandbox.data.transactionArgs(1, row.hash);
      const kind = row.to_address ? sandbox.data.contract(row.to_address)?.kind : undefined;
      if (!args || kind === 'unknown' || kind === undefined) {
        expect(row.decoded).toBeNull();
        continue;
      }
      expect(row.decoded).toEqual({ name: args.name, signature: args.signature, inputs: args.args });
      decoded++;
    }
    expect(decoded).toBeGreaterThan(50);
  });

  it('decodes events with the indexed markers of the request signature', async () => {
    const nft = sandbox.data.contracts.find((c) => c.kind === 'erc721' && c.chainId === 8453)!;
    const right = encodeURIComponent('Transfer(address indexed from, address indexed to, uint256 indexed tokenId)');
    const { body } = await getJson(`${sandbox.url}/events/${nft.address}/${right}?chain_id=8453&decode=true&limit=50`);
    expect(body.data.length).toBeGreaterThan(0);
    for (const e of body.data) {
      const a = sandbox.data.logArgs(8453, e.transaction_hash)!.args;
      expect(e.decoded).toEqual({
        name: 'Transfer',
        signature: 'Transfer(address,address,uint256)',
        indexed_params: { from: a.from, to: a.to, tokenId: a.tokenId },
        non_indexed_params: {},
      });
    }
    // same topic0, but tokenId not marked indexed: positional decoding fails -> null
    const wrong = encodeURIComponent('Transfer(address indexed from, address indexed to, uint256 tokenId)');
    const w = await getJson(`${sandbox.url}/events/${nft.address}/${wrong}?chain_id=8453&decode=true&limit=50`);
    expect(w.body.meta.signature).toBe(body.meta.signature);
    expect(w.body.data.length).toBe(body.data.length);
    for (const e of w.body.data) expect(e.decoded).toBeNull();
  });

  it('accepts signatures without parameter names and keys their values by position', async () => {
    const token = sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
    const sig = encodeURIComponent('event Transfer(address indexed, address indexed, uint256)');
    const { status, body } = await getJson(`${sandbox.url}/events/${token.address}/${sig}?chain_id=1&decode=true&limit=5`);
    expect(status).toBe(200);
    for (const e of body.data) {
      const a = sandbox.data.logArgs(1, e.transaction_hash)!.args;
      expect(e.decoded.indexed_params).toEqual({ arg0: a.from, arg1: a.to });
      expect(e.decoded.non_indexed_params).toEqual({ arg2: a.value });
    }
  });

  it('leaves decoded null for the unknown contract', async () => {
    const unknown = sandbox.data.contracts.find((c) => c.kind === 'unknown' && c.chainId === 1)!;
    const sig = encodeURIComponent('SandboxPing(uint256 indexed round, bytes32 tag)');
    const { body } = await getJson(`${sandbox.url}/events/${unknown.address}/${sig}?chain_id=1&decode=true&limit=20`);
    expect(body.data).toHaveLength(20);
    for (const e of body.data) expect(e.decoded).toBeNull();
  });

  it('omits decoded without decode=true', async () => {
    const { body } = await getJson(`${sandbox.url}/wallets/${sandbox.data.wallets[0]!.address}/transactions?limit=5`);
    for (const row of body.data) expect('decoded' in row).toBe(false);
  });
});
