/**
 * Wire-format records as the current service sends them: transactions with the fields of
 * thirdweb-dev/insight's `TransactionModel` (internal/common/transaction.go, commit
 * ee2637cc05569983ff2d1c856dc80b546c89518c); chain_id a string in transactions and events, a
 * number in a resolve answer's block.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { InsightClient } from '../../src/source/client.js';
import type { closeAfterEach } from '../helpers/close-after-each.js';

export const WALLET = '0x1111111111111111111111111111111111111111';
export const CONTRACT = '0x2222222222222222222222222222222222222222';
export const HASH = `0x${'ab'.repeat(32)}`;
export const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

export function wireTransaction(i = 0): Record<string, unknown> {
  return {
    chain_id: '1',
    block_number: 19_000_000 + i,
    block_hash: `0x${(i + 1).toString(16).padStart(64, '0')}`,
    block_timestamp: 1_700_000_000 + i * 12,
    hash: `0x${(i + 7).toString(16).padStart(64, 'c')}`,
    nonce: i,
    transaction_index: i % 200,
    from_address: WALLET,
    to_address: CONTRACT,
    value: '1000000000000000000000',
    gas_price: '30000000000',
    gas: 21000,
    function_selector: '0xa9059cbb',
    data: '0xa9059cbb000000000000000000000000222222222222222222222222222222222222222200000000000000000000000000000000000000000000000000000000000003e8',
    max_fee_per_gas: '40000000000',
    max_priority_fee_per_gas: '1000000000',
    transaction_type: 2,
    r: '11579208923731619542357098500868790785326998466564056403945758400791312963993',
    s: '1234567890123456789012345678901234567890',
    v: '0',
    access_list_json: '[]',
    authorization_list_json: '[]',
    contract_address: '',
    gas_used: 21000,
    cumulative_gas_used: 1_000_000 + i,
    effective_gas_price: '31000000000',
    blob_gas_used: 0,
    blob_gas_price: '0',
    logs_bloom: `0x${'0'.repeat(512)}`,
    status: 1,
  };
}

export function wireEvent(i = 0): Record<string, unknown> {
  return {
    chain_id: '1',
    block_number: 19_000_000 + i,
    block_hash: `0x${(i + 1).toString(16).padStart(64, '0')}`,
    block_timestamp: 1_700_000_000 + i * 12,
    transaction_hash: `0x${(i + 7).toString(16).padStart(64, 'c')}`,
    transaction_index: i % 200,
    log_index: i,
    address: CONTRACT,
    data: '0x00000000000000000000000000000000000000000000000000000000000003e8',
    topics: [
      '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
      `0x000000000000000000000000${WALLET.slice(2)}`,
      `0x000000000000000000000000${CONTRACT.slice(2)}`,
    ],
  };
}

export function wireBlock(i = 0): Record<string, unknown> {
  return {
    chain_id: 1,
    block_number: 19_000_000 + i,
    block_hash: `0x${(i + 1).toString(16).padStart(64, '0')}`,
    parent_hash: `0x${i.toString(16).padStart(64, '0')}`,
    block_timestamp: 1_700_000_000 + i * 12,
    nonce: '0x0000000000000000',
    sha3_uncles: `0x${'1d'.repeat(32)}`,
    mix_hash: `0x${'2e'.repeat(32)}`,
    miner: WALLET,
    state_root: `0x${'3f'.repeat(32)}`,
    transactions_root: `0x${'4a'.repeat(32)}`,
    receipts_root: `0x${'5b'.repeat(32)}`,
    logs_bloom: `0x${'0'.repeat(512)}`,
    size: 1234,
    extra_data: '0x',
    difficulty: '0',
    total_difficulty: '58750003716598352816469',
    transaction_count: 150,
    gas_limit: 30_000_000,
    gas_used: 12_000_000,
    withdrawals_root: `0x${'6c'.repeat(32)}`,
    base_fee_per_gas: 25_000_000_000,
  };
}

export function wireMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { chain_ids: [1], page: 0, limit_per_chain: 20, total_items: 1, total_pages: 0, ...extra };
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void;

export interface FakeServer {
  url: string;
  requests: SeenRequest[];
  server: Server;
  close(): Promise<void>;
}

/** A tiny node:http server whose handler controls the exact bytes of every answer. */
export async function fakeServer(handler: Handler): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body, requests.length);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * A fake server and a client of it with quick retries (3 attempts, backoff of a few ms), both
 * closed after the test by `closing` (closeAfterEach's lists).
 */
export async function fakeServerAndClient(
  handler: Handler,
  closing: ReturnType<typeof closeAfterEach>,
  backoffMaxMs = 2,
): Promise<{ server: FakeServer; client: InsightClient }> {
  const server = await fakeServer(handler);
  closing.servers.push(server);
  const client = new InsightClient({
    baseUrl: `${server.url}/insights/v1`,
    backoff: { baseMs: 1, maxMs: backoffMaxMs },
    timeoutMs: 2_000,
    maxAttempts: 3,
  });
  closing.clients.push(client);
  return { server, client };
}
