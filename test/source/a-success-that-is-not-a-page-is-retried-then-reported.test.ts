import { describe, expect, it } from 'vitest';
import { NotAPageError, RetriesExhaustedError } from '../../src/source/errors.js';
import { WALLET, fakeServerAndClient, sendJson, wireMeta, wireTransaction, type Handler } from './fixtures.js';
import { closeAfterEach } from '../helpers/close-after-each.js';

const closing = closeAfterEach();

const setup = (handler: Handler) => fakeServerAndClient(handler, closing, 5);

const page = () => ({ meta: wireMeta(), data: [wireTransaction(0), wireTransaction(1)] });

/** 2xx bodies that are not a page, as the real service and misbehaving servers send them. */
const NOT_PAGES: [string, unknown, string | undefined][] = [
  ['an {"error"} body', { error: 'Query exceeded the time limit' }, 'Query exceeded the time limit'],
  ['an older {code, message} body', { code: 500, message: 'An unexpected error occurred.' }, 'An unexpected error occurred. (code 500)'],
  ['data: null', { meta: wireMeta(), data: null }, undefined],
  ['no data at all', { meta: wireMeta() }, undefined],
];

describe('a 2xx that is not a page', () => {
  for (const [what, body, message] of NOT_PAGES) {
    it(`retries ${what} like a 5xx and then takes the page`, async () => {
      const { server, client } = await setup((_q, res, _b, n) => sendJson(res, 200, n <= 2 ? body : page()));
      const res = await client.walletTransactions(WALLET, { chainIds: [1], limit: 2 });
      expect(res.data).toHaveLength(2);
      expect(server.requests).toHaveLength(3);
      expect(client.stats.retries).toBe(2);
    });

    it(`reports ${what} with the service's own message when it persists, never as an empty page`, async () => {
      const { server, client } = await setup((_q, res) => sendJson(res, 200, body));
      const err = await client.walletTransactions(WALLET, { chainIds: [1] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RetriesExhaustedError);
      const cause = (err as RetriesExhaustedError).lastCause;
      expect(cause).toBeInstanceOf(NotAPageError);
      if (message) expect((err as Error).message).toContain(message);
      expect(server.requests).toHaveLength(3);
    });
  }

  it('retries an error body answered to an aggregate query too', async () => {
    const { server, client } = await setup((_q, res, _b, n) =>
      sendJson(res, 200, n === 1 ? { error: 'Memory limit exceeded' } : { meta: wireMeta(), aggregations: [{ count: 3 }] }),
    );
    const res = await client.walletTransactions(WALLET, { chainIds: [1], aggregate: ['count() as count'] });
    expect(res.aggregations).toEqual([{ count: 3 }]);
    expect(server.requests).toHaveLength(2);
  });
});
