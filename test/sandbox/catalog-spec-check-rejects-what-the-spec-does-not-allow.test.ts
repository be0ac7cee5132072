import { describe, expect, it } from 'vitest';
import { appendUpdates, restSpec } from '../helpers/catalog-sandbox.js';

// The check every catalog test runs after each test (helpers/catalog-sandbox.ts) has teeth: what
// the spec does not allow in a request or an answer is reported.
const TABLE = '/v1/namespaces/demo/tables/t';
const metadata = { 'format-version': 2, 'table-uuid': '2b5e8d4a-7f0c-4a55-9d8e-0c1b2a3f4e5d' };

describe('the OpenAPI check of catalog exchanges', () => {
  it('passes a commit and its answer that follow the spec', () => {
    const ok = {
      method: 'POST',
      path: TABLE,
      request: { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }], updates: appendUpdates(2, 1, 2) },
      status: 200,
      response: { 'metadata-location': 'file:///w/t/metadata/00002-x.metadata.json', metadata },
    };
    expect(restSpec().problems(ok)).toEqual([]);
  });

  it('reports a requirement without its fields, an unknown update, an answer without its location, an unlisted status', () => {
    const check = (request: unknown, status: number, response: unknown) =>
      restSpec().problems({ method: 'POST', path: TABLE, request, status, response });
    expect(
      check({ requirements: [{ type: 'assert-ref-snapshot-id' }], updates: [] }, 200, { 'metadata-location': 'x', metadata }),
    ).toHaveLength(1);
    expect(check({ requirements: [], updates: [{ action: 'add-snapshot' }] }, 200, { 'metadata-location': 'x', metadata })).toHaveLength(1);
    expect(check({ requirements: [], updates: [] }, 200, { metadata })).toHaveLength(1);
    expect(check({ requirements: [], updates: [] }, 409, { error: 'conflict' })).toHaveLength(1);
    expect(check({ requirements: [], updates: [] }, 418, undefined)).toHaveLength(1);
  });

  it('matches paths with a prefix to the spec templates', () => {
    const e = { method: 'GET', path: '/v1/wh-1/namespaces', request: undefined, status: 200, response: { namespaces: [['a']] } };
    expect(restSpec().problems(e, 'wh-1')).toEqual([]);
    expect(restSpec().problems({ ...e, response: { namespaces: 'a' } }, 'wh-1')).toHaveLength(1);
  });
});
