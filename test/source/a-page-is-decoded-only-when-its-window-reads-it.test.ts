import { describe, expect, it } from 'vitest';
import type { HeldBody } from '../../src/source/client.js';
import { PageNotWantedError } from '../../src/source/errors.js';
import { newPagingStats, pageWindow, type RequestPool } from '../../src/source/paginator.js';
import type { Filters } from '../../src/source/query.js';
import { RunRequestPool } from '../../src/run/request-pool.js';
import { WALLET, fakeServerAndClient, wireMeta, wireTransaction } from './fixtures.js';
import { blockWindowOptions, fakeService, makeRows } from './paginator-fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const closing = closeAfterEach();

/** A HeldBody whose page is wanted when the test says so. */
function holding() {
  let want!: (yes: boolean) => void;
  let received!: () => void;
  const arrived = new Promise<void>((resolve) => (received = resolve));
  const wanted = new Promise<void>((resolve, reject) => (want = (yes) => (yes ? resolve() : reject(new PageNotWantedError()))));
  wanted.catch(() => undefined);
  const held: HeldBody = { received, wanted };
  return { held, arrived, want };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

function setup(bodies: string[]) {
  return fakeServerAndClient((_q, res) => {
    const body = bodies.shift() ?? JSON.stringify({ meta: wireMeta(), data: [wireTransaction(0)] });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }, closing);
}

describe('the client decodes a held page only when it is wanted', () => {
  it('holds a received body undecoded: a body cut short is retried when the page is wanted, not when it arrives', async () => {
    const { server, client } = await setup(['{"meta":{"page":0,"limit":5},"data":[{"cha']);
    const { held, arrived, want } = holding();
    const answer = client.walletTransactions(WALLET, { chainIds: [1] }, held);
    await arrived;
    await turns(50);
    // Decoded on arrival, the cut body would have been retried by now.
    expect(server.requests).toHaveLength(1);
    want(true);
    const page = await answer;
    expect(page.data).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(client.stats.retries).toBe(1);
  });

  it('drops a page that is never wanted, undecoded and without counting a failure', async () => {
    const { server, client } = await setup(['not json at all']);
    const { held, arrived, want } = holding();
    const answer = client.walletTransactions(WALLET, { chainIds: [1] }, held);
    await arrived;
    want(false);
    await expect(answer).rejects.toBeInstanceOf(PageNotWantedError);
    expect(server.requests).toHaveLength(1);
    expect(client.stats).toMatchObject({ retries: 0, failures: 0 });
  });

  it('decodes a page wanted before its body arrives as soon as it arrives', async () => {
    const { client } = await setup([]);
    const { held, want } = holding();
    want(true);
    const page = await client.walletTransactions(WALLET, { chainIds: [1] }, held);
    expect(page.data).toHaveLength(1);
  });
});

describe('pageWindow wants each page when its window reads it', () => {
  /** The fake service's answers, given to the window only once it wants them; what the pool sees on the way. */
  function heldService(limit: number) {
    const rows = makeRows(1, 40, () => 3);
    const service = fakeService(rows);
    const log: string[] = [];
    const helds: HeldBody[] = [];
    const fetch = async (chains: number[], filters: Filters, held: HeldBody) => {
      const n = helds.push(held);
      const answer = await service.fetch(chains, filters, 0, limit);
      held.received();
      log.push(`received ${n}`);
      await held.wanted.then(
        () => log.push(`wanted ${n}`),
        (err: unknown) => {
          log.push(`dropped ${n}`);
          throw err;
        },
      );
      return answer;
    };
    return { rows, fetch, log, helds };
  }

  /** One chain's window of 40 blocks, cut into pieces of ~2 blocks from the start. */
  const windowOf = (pool: RequestPool, limit: number) =>
    blockWindowOptions(async () => [], { chainIds: [1], start: 1000, end: 1040, limit, prefetch: 8, pool, density: new Map([[1, 3]]) });

  it('frees the request slot on arrival, and wants pages in the order the window reads them', async () => {
    const limit = 10;
    const src = heldService(limit);
    const pool = new RunRequestPool(4);
    pool.windows = 1;
    const options = windowOf(pool, limit);
    const read: number[] = [];
    let answeredWhileUnread = 0;
    for await (const batch of pageWindow({ ...options, fetch: src.fetch, stats: newPagingStats() })) {
      if ('done' in batch) continue;
      read.push(...batch.records.map((r) => r.block));
      await turns(5);
      const { inFlight, outstanding } = pool.counts;
      answeredWhileUnread = Math.max(answeredWhileUnread, outstanding - inFlight);
    }
    expect(read).toEqual(src.rows.map((r) => r.block));
    // Answers waiting to be read held no request slot (their bodies were received), ...
    expect(answeredWhileUnread).toBeGreaterThan(0);
    // ... and each page was wanted only after the ones before it.
    const wanted = src.log.filter((e) => e.startsWith('wanted')).map((e) => Number(e.split(' ')[1]));
    expect(wanted).toEqual([...wanted].sort((a, b) => a - b));
    expect(wanted).toHaveLength(src.helds.length);
    expect(pool.counts).toEqual({ inFlight: 0, outstanding: 0 });
  });

  it('drops the pages a stopped window never read, and gives their slots back', async () => {
    const limit = 10;
    const src = heldService(limit);
    const pool = new RunRequestPool(4);
    const options = windowOf(pool, limit);
    for await (const batch of pageWindow({ ...options, fetch: src.fetch })) {
      if (!('done' in batch)) break;
    }
    await turns(20);
    const dropped = src.log.filter((e) => e.startsWith('dropped'));
    const wanted = src.log.filter((e) => e.startsWith('wanted'));
    expect(wanted).toHaveLength(1);
    expect(dropped.length).toBeGreaterThan(0);
    expect(wanted.length + dropped.length).toBe(src.log.filter((e) => e.startsWith('received')).length);
    expect(pool.counts).toEqual({ inFlight: 0, outstanding: 0 });
  });
});
