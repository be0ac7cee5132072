/**
 * Issue 8: the sandbox reads receipts with eth_getBlockReceipts when the node has it, and one
 * eth_getTransactionReceipt per transaction when it does not. A JSON-RPC proxy in front of anvil
 * answers eth_getBlockReceipts with "method not found" (-32601), as nodes without it do; the
 * sandbox behind it detects that, falls back, and loads exactly the records of a sandbox reading
 * anvil directly with block receipts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcNodeError, startRpcSandbox, type RpcSandbox } from '@insight-export/sandbox/rpc';
import { ChainActivity } from './helpers/activity.js';
import { useAnvil } from './helpers/anvil.js';

const CHAIN = 31337;
const anvil = useAnvil();
let proxy: Server;
let proxyUrl: string;
const methods = new Map<string, number>();

interface RpcRequest {
  id: number;
  method: string;
  params?: unknown[];
}

/** Forwards JSON-RPC (single or batch) to anvil, except eth_getBlockReceipts: "method not found". */
async function answer(req: RpcRequest): Promise<unknown> {
  methods.set(req.method, (methods.get(req.method) ?? 0) + 1);
  if (req.method === 'eth_getBlockReceipts') {
    return {
      jsonrpc: '2.0',
      id: req.id,
      error: { code: -32601, message: 'the method eth_getBlockReceipts does not exist/is not available' },
    };
  }
  const res = await fetch(anvil.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req) });
  return res.json();
}

beforeAll(async () => {
  const act = new ChainActivity(anvil, 5);
  await act.init();
  await act.deploy();
  for (let b = 2; b <= 4; b++) await act.block(b, 2);
  proxy = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      const parsed = JSON.parse(body) as RpcRequest | RpcRequest[];
      const out = Array.isArray(parsed) ? await Promise.all(parsed.map(answer)) : await answer(parsed);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
});

describe('receipts', () => {
  it('falls back to per-transaction receipts and loads the same records as with eth_getBlockReceipts', async () => {
    let direct: RpcSandbox | undefined;
    let fallback: RpcSandbox | undefined;
    try {
      direct = await startRpcSandbox({ rpc: anvil.url, pollMs: 0 });
      fallback = await startRpcSandbox({ rpc: proxyUrl, pollMs: 0 });
      expect(direct.receiptsModes()).toEqual(['block']);
      expect(fallback.receiptsModes()).toEqual(['transaction']);
      expect(methods.get('eth_getBlockReceipts')).toBe(1);
      const a = direct.data.store(CHAIN)!;
      const b = fallback.data.store(CHAIN)!;
      expect(a.txs.length).toBeGreaterThan(50);
      expect(methods.get('eth_getTransactionReceipt')).toBe(a.txs.length);
      expect(b.blocks).toEqual(a.blocks);
      expect(b.txs).toEqual(a.txs);
      expect(b.logs).toEqual(a.logs);
      expect(a.txs.every((t) => t.gas_used !== null && t.cumulative_gas_used !== null && t.status !== null && t.logs_bloom !== null)).toBe(
        true,
      );
    } finally {
      await direct?.close();
      await fallback?.close();
    }
  });

  it('with --receipts block, a node without eth_getBlockReceipts is a typed error', async () => {
    await expect(startRpcSandbox({ rpc: proxyUrl, pollMs: 0, receipts: 'block' })).rejects.toThrow(RpcNodeError);
  });
});
