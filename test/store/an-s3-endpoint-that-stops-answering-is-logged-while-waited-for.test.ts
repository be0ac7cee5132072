/**
 * Issue 31 item 6: an S3 gateway that accepts connections but stops answering (radosgw frozen by
 * SIGSTOP: the kernel still accepts, nothing answers) left a run silent past the retry budget. A
 * listening socket that never answers is the same to the client. The store logs a warning while an
 * operation waits (op, key, endpoint, never credentials), again at each interval, and the socket
 * timeout bounds each attempt: the operation ends with StoreUnavailableError.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { S3Store } from '../../src/store/s3.js';

let server: Server;
const sockets = new Set<Socket>();
let endpoint = '';

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // Reads the request and never answers.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

it('a silent endpoint: warnings while the operation waits, then StoreUnavailableError', { timeout: 30_000 }, async () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const secret = 'frozen-gateway-secret-key-value';
  const store = new S3Store({
    bucket: 'frozen',
    prefix: 'p',
    endpoint,
    credentials: { accessKeyId: 'AKIAFROZEN', secretAccessKey: secret },
    logger: createLogger({ level: 'warn', pretty: false, destination }),
    maxAttempts: 1,
    socketTimeoutMs: 1_500,
    retryBudgetMs: 2_500,
    stillWaitingMs: 500,
  });
  const started = Date.now();
  try {
    await expect(store.head('state/x.json')).rejects.toBeInstanceOf(StoreUnavailableError);
  } finally {
    await store.close();
  }
  const elapsed = Date.now() - started;
  // Bounded: the budget, plus at most one attempt's socket timeout begun inside it.
  expect(elapsed).toBeLessThan(2_500 + 1_500 + 1_000);
  const waiting = lines.filter((l) => l.msg === 'S3 operation still waiting for the endpoint');
  expect(waiting.length).toBeGreaterThanOrEqual(3);
  expect(waiting[0]).toMatchObject({ op: 'head', key: 'state/x.json', endpoint, store: 's3://frozen/p' });
  const waited = waiting.map((l) => l.waited_s as number);
  expect(waited).toEqual([...waited].sort((a, b) => a - b));
  expect(waited.at(-1)!).toBeGreaterThan(waited[0]!);
  expect(JSON.stringify(lines)).not.toContain(secret);
});
