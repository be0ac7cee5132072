import { describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@insight-export/sandbox';
import { getJson } from '../helpers/sandbox.js';

async function withSandbox<T>(opts: Parameters<typeof startSandbox>[0], fn: (s: Sandbox) => Promise<T>): Promise<T> {
  const s = await startSandbox(opts);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

async function walletAll(s: Sandbox, address: string, chainId: number): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 0; page <= 20; page++) {
    const { body } = await getJson(
      `${s.url}/wallets/${address}/transactions?chain_id=${chainId}&sort_by=block_number&limit=1000&page=${page}`,
    );
    rows.push(...body.data);
    if (body.data.length < 1000) break;
  }
  return rows;
}

describe('compatibility options', () => {
  it('duplicateSelfTransfers returns each self-transfer twice, adjacent; the default returns it once', async () => {
    const opts = { transactions: 4_000, seed: 31 };
    const plain = await withSandbox(opts, async (s) => walletAll(s, s.data.wallets[0]!.address, 1));
    const dup = await withSandbox({ ...opts, duplicateSelfTransfers: true }, async (s) => walletAll(s, s.data.wallets[0]!.address, 1));
    const selfHashes = plain.filter((r) => r.from_address === r.to_address).map((r) => r.hash);
    expect(selfHashes.length).toBeGreaterThan(0);
    expect(new Set(plain.map((r) => r.hash)).size).toBe(plain.length);
    expect(dup.length).toBe(plain.length + selfHashes.length);
    for (const h of selfHashes) {
      const at = dup.findIndex((r) => r.hash === h);
      expect(dup[at + 1].hash).toBe(h);
    }
    // de-duplicated on (chain_id, hash) the two are the same
    expect([...new Map(dup.map((r) => [r.hash, r])).values()]).toEqual(plain);
  });

  it('legacyTypes sends some rows with block_number as a string and value as a number', async () => {
    await withSandbox({ transactions: 3_000, seed: 31, legacyTypes: true }, async (s) => {
      const alice = s.data.wallets[0]!;
      const { body } = await getJson(`${s.url}/wallets/${alice.address}/transactions?chain_id=1&limit=200`);
      const legacy = body.data.filter((r: any) => typeof r.block_number === 'string');
      expect(legacy.length).toBeGreaterThan(10);
      expect(legacy.length).toBeLessThan(body.data.length);
      for (const r of legacy) {
        expect(typeof r.value).toBe('number');
        expect(Number(r.block_number)).toBe(s.data.transaction(1, r.hash)!.block_number);
      }
    });
  });

  it('decodedVariants renders some bytes as base64 or arrays of numbers', async () => {
    await withSandbox({ transactions: 8_000, seed: 31, decodedVariants: true }, async (s) => {
      const token = s.data.contracts.find((c) => c.kind === 'erc1155' && c.chainId === 1)!;
      const txs = [...s.data.transactions(1)].filter((t) => t.to_address === token.address && t.data.length > 10 + 64 * 6);
      const shapes = new Set<string>();
      for (const t of txs) {
        const { body } = await getJson(`${s.url}/wallets/${t.from_address}/transactions?chain_id=1&filter_hash=${t.hash}&decode=true`);
        const data = body.data[0].decoded.inputs.data;
        const expected = Buffer.from(s.data.transactionArgs(1, t.hash)!.args.data!.slice(2), 'hex');
        if (Array.isArray(data)) {
          shapes.add('array');
          expect(Buffer.from(data)).toEqual(expected);
        } else if (data.startsWith('0x')) {
          shapes.add('hex');
          expect(data).toBe('0x' + expected.toString('hex'));
        } else {
          shapes.add('base64');
          expect(Buffer.from(data, 'base64')).toEqual(expected);
        }
        if (shapes.size === 3) break;
      }
      expect(shapes).toEqual(new Set(['array', 'hex', 'base64']));
    });
  });

  it('serves the same routes under another path prefix (/v1) and explorer prefix', async () => {
    await withSandbox({ transactions: 1_000, pathPrefix: '/v1', explorerPrefix: '/explorer/api/v2' }, async (s) => {
      expect(s.url).toMatch(/\/v1$/);
      expect((await getJson(`${s.url}/resolve/alice.eth`)).body.data.address).toBe(s.data.wallets[0]!.address);
      expect((await getJson(`${s.explorerUrl}/addresses/${s.data.wallets[0]!.address}/nft/collections`)).status).toBe(200);
      expect((await getJson(`${new URL(s.url).origin}/insights/v1/resolve/alice.eth`)).status).toBe(404);
    });
  });
});
