/**
 * The real indexer crashes (HTTP 500, empty body) on an event signature it cannot parse and on a
 * block it has not indexed: such a query ends after a few identical answers with the likely cause,
 * not after every retry with "retries exhausted". Other 500s are retried as before. Both shapes
 * of an error body ({error} and {code, message, support_id}) reach the user.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InsightClient } from '../../src/source/client.js';
import { RepeatedServerError, RetriesExhaustedError } from '../../src/source/errors.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';

const panicking = useSandbox({ seed: 42, transactions: 5_000, panicsAs500: true });
const strictContract = useSandbox({ seed: 42, transactions: 5_000, strictResolve: true });
const strictIndexer = useSandbox({ seed: 42, transactions: 5_000, strictResolve: true, insightErrorBodies: true });

/** A server that answers every request with one status and body, counting them. */
let server: Server;
let answer = { status: 500, body: '' };
let hits = 0;
let base = '';
beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const client = (baseUrl: string) => new InsightClient({ baseUrl, maxAttempts: 6, backoff: { baseMs: 0, maxMs: 0 } });
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const TOKEN = '0x77f5e148a71be22cf4f3a1816626b240547b6302';

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (err: Error) => err,
  );
}

describe('a query the service crashes on', () => {
  it('resolve of a block the sandbox (panicsAs500) has not indexed ends after 3 attempts, naming the block', async () => {
    const c = client(panicking.url);
    const err = await failure(c.resolve('999999999', { chainIds: [1] }));
    expect(err).toBeInstanceOf(RepeatedServerError);
    expect(err.message).toMatch(/3 times with the same HTTP 500 \(an empty body\)/);
    expect(err.message).toMatch(/block 999999999 is probably not indexed/);
    expect(err.message).not.toMatch(/after \d+ attempts/);
    expect(c.stats.requests).toBe(3);
    await c.close();
  });

  it('events whose signature the service cannot parse end after 3 empty 500s, naming the signature', async () => {
    answer = { status: 500, body: '' };
    hits = 0;
    const c = client(base);
    const err = await failure(c.contractEvents(TOKEN, TRANSFER, { chainIds: [1] }));
    expect(err).toBeInstanceOf(RepeatedServerError);
    expect(err.message).toContain(`cannot parse the event signature "${TRANSFER}"`);
    expect(hits).toBe(3);
    await c.close();
  });

  it('a 500 with a body, or an empty 500 on a query of no such kind, is retried to maxAttempts as before', async () => {
    for (const [a, call] of [
      [
        { status: 500, body: '{"code":500,"message":"An unexpected error occurred.","support_id":"TODO"}' },
        (c: InsightClient) => c.contractEvents(TOKEN, TRANSFER, { chainIds: [1] }),
      ],
      [{ status: 500, body: '' }, (c: InsightClient) => c.resolve(`0x${'ab'.repeat(32)}`, { chainIds: [1] })],
    ] as const) {
      answer = a;
      hits = 0;
      const c = client(base);
      const err = await failure(call(c));
      expect(err).toBeInstanceOf(RetriesExhaustedError);
      expect(hits).toBe(6);
      await c.close();
    }
  });
});

describe('a 400 from the service', () => {
  it('shows the message of either body shape, and the support id of {code, message, support_id}', async () => {
    const contractShape = await runCli(['resolve', 'alice.eth', '--base-url', strictContract.url, '--log-level', 'silent']);
    const indexerShape = await runCli(['resolve', 'alice.eth', '--base-url', strictIndexer.url, '--log-level', 'silent']);
    for (const res of [contractShape, indexerShape]) {
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/rejected the input "alice\.eth": invalid input 'alice\.eth'/);
    }
    expect(indexerShape.stderr).toMatch(/\(code 400\)/);
    expect(indexerShape.stderr).toMatch(/support id: TODO/);
  });
});
