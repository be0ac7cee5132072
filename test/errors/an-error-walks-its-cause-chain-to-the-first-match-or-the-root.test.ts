/**
 * walk (viem's BaseError.walk): from an error through its `cause` chain, the first error a test
 * accepts, or the root cause without a test. Callers find the HTTP status behind a retry with it
 * instead of unwrapping each wrapper by hand.
 */
import { describe, expect, it } from 'vitest';
import { InsightExportError, walk } from '../../src/errors.js';
import { HttpStatusError, NetworkError, RepeatedServerError, RetriesExhaustedError } from '../../src/source/errors.js';

const URL = 'http://127.0.0.1:1/v1/resolve/5';

describe('walk', () => {
  it('finds the HTTP status behind a retry that gave up, or behind none', () => {
    const bare = new HttpStatusError(500, URL, undefined);
    const retried = new RetriesExhaustedError(URL, 3, bare);
    const repeated = new RepeatedServerError(URL, 3, bare, 'a block it has not indexed');
    for (const err of [bare, retried, repeated]) {
      const http = walk(err, (e) => e instanceof HttpStatusError);
      expect(http).toBe(bare);
      expect(http?.status).toBe(500);
    }
  });

  it('answers null when no error of the chain passes the test', () => {
    const network = new NetworkError(URL, 'ECONNRESET', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const retried = new RetriesExhaustedError(URL, 3, network);
    expect(walk(retried, (e) => e instanceof HttpStatusError)).toBeNull();
    expect(retried.walk((e) => e instanceof HttpStatusError)).toBeNull();
  });

  it('without a test answers the root cause: the last error of the chain', () => {
    const root = new Error('ECONNRESET');
    const network = new NetworkError(URL, 'ECONNRESET', root);
    const retried = new RetriesExhaustedError(URL, 3, network);
    expect(retried.walk()).toBe(root);
    expect(walk(retried)).toBe(root);
    expect(network.walk((e) => e instanceof InsightExportError)).toBe(network);
  });

  it('walks any thrown value: library errors with causes, values that are not errors, a chain that loops', () => {
    const inner = Object.assign(new Error('method not found'), { code: -32601 });
    const outer = new Error('request failed', { cause: inner });
    expect(walk(outer, (e) => (e as { code?: number }).code === -32601)).toBe(inner);
    expect(walk('a string')).toBe('a string');
    expect(walk(undefined, () => false)).toBeNull();
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(walk(a, () => false)).toBeNull();
    expect(walk(a)).toBe(b);
  });
});
