import { describe, expect, it } from 'vitest';
import { appendUpdates, createTableRequest, useCatalogSandbox } from '../helpers/catalog-sandbox.js';

const c = useCatalogSandbox({ prefix: 'wh-1', auth: { clientId: 'exporter', clientSecret: 's3cret', token: 'static-token' } });
const bearer = { authorization: 'Bearer static-token' };

async function token(form: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${c.sandbox.catalog.url}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: await res.json() };
}

describe('the sandbox catalog: auth', () => {
  it('401s without a bearer token, issues tokens for client credentials, and a token answered "expired" stays so', async () => {
    expect((await c.call('GET', '/v1/config')).status).toBe(401);
    expect((await token({ grant_type: 'client_credentials', client_id: 'exporter', client_secret: 'wrong' })).status).toBe(401);
    const issued = await token({ grant_type: 'client_credentials', client_id: 'exporter', client_secret: 's3cret', scope: 'catalog' });
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const auth = { authorization: `Bearer ${issued.body.access_token}` };
    expect((await c.call('GET', '/v1/config', undefined, auth)).status).toBe(200);
    c.sandbox.catalog.set({ expireTokens: 1 });
    const expired = await c.call('GET', '/v1/config', undefined, auth);
    expect([expired.status, expired.body.error.message]).toEqual([401, 'not authorized: token expired']);
    expect((await c.call('GET', '/v1/config', undefined, auth)).status).toBe(401);
    // The static token is answered 401 once, then accepted again.
    c.sandbox.catalog.set({ expireTokens: 1 });
    expect((await c.call('GET', '/v1/config', undefined, bearer)).status).toBe(401);
    expect((await c.call('GET', '/v1/config', undefined, bearer)).status).toBe(200);
  });

  it('expires the tokens it issued after their lifetime', async () => {
    c.sandbox.catalog.set({ auth: { clientId: 'exporter', clientSecret: 's3cret', tokenLifetimeSeconds: 0.2 } });
    try {
      const issued = await token({ grant_type: 'client_credentials', client_id: 'exporter', client_secret: 's3cret' });
      const auth = { authorization: `Bearer ${issued.body.access_token}` };
      expect((await c.call('GET', '/v1/config', undefined, auth)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      expect((await c.call('GET', '/v1/config', undefined, auth)).status).toBe(401);
    } finally {
      c.sandbox.catalog.set({ auth: { clientId: 'exporter', clientSecret: 's3cret', token: 'static-token' } });
    }
  });
});

describe('the sandbox catalog: prefix, latency, commits answered 5xx', () => {
  it('announces its prefix in /v1/config overrides (or defaults) and 404s paths without it', async () => {
    expect((await c.call('GET', '/v1/config?warehouse=demo', undefined, bearer)).body).toMatchObject({
      overrides: { prefix: 'wh-1' },
      defaults: {},
    });
    c.sandbox.catalog.set({ prefixIn: 'defaults' });
    expect((await c.call('GET', '/v1/config', undefined, bearer)).body).toMatchObject({ defaults: { prefix: 'wh-1' }, overrides: {} });
    c.sandbox.catalog.set({ prefixIn: 'overrides' });
    expect((await c.call('GET', '/v1/wh-1/namespaces', undefined, bearer)).status).toBe(200);
    const without = await c.call('GET', '/v1/namespaces', undefined, bearer);
    expect([without.status, without.body.error.type]).toEqual([404, 'NoSuchRouteException']);
  });

  it('delays every answer by latencyMs', async () => {
    c.sandbox.catalog.set({ latencyMs: 300 });
    try {
      const t0 = performance.now();
      await c.call('GET', '/v1/config', undefined, bearer);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(295);
    } finally {
      c.sandbox.catalog.set({ latencyMs: 0 });
    }
  });

  it('applies a commit it answers 500, 502 or 504: the table is at the new snapshot', async () => {
    await c.call('POST', '/v1/wh-1/namespaces', { namespace: ['demo'] }, bearer);
    await c.call('POST', '/v1/wh-1/namespaces/demo/tables', createTableRequest('t'), bearer);
    const path = '/v1/wh-1/namespaces/demo/tables/t';
    c.sandbox.catalog.set({ commitFaults: [502, 500, 504] });
    let parent: number | undefined;
    for (const [i, status] of [502, 500, 504].entries()) {
      const answer = await c.call('POST', path, { requirements: [], updates: appendUpdates(40 + i, parent, i + 1) }, bearer);
      expect([answer.status, answer.body.error.type]).toEqual([status, 'CommitStateUnknownException']);
      expect((await c.call('GET', path, undefined, bearer)).body.metadata['current-snapshot-id']).toBe(40 + i);
      parent = 40 + i;
    }
    expect((await c.call('POST', path, { requirements: [], updates: appendUpdates(50, parent, 4) }, bearer)).status).toBe(200);
  });

  it('applies a commit whose answer it drops (dropCommitAnswers): the connection closes, the table is at the new snapshot', async () => {
    await c.call('POST', '/v1/wh-1/namespaces', { namespace: ['lost'] }, bearer);
    await c.call('POST', '/v1/wh-1/namespaces/lost/tables', createTableRequest('t'), bearer);
    const path = '/v1/wh-1/namespaces/lost/tables/t';
    c.sandbox.catalog.set({ dropCommitAnswers: 1 });
    await expect(c.call('POST', path, { requirements: [], updates: appendUpdates(60, undefined, 1) }, bearer)).rejects.toThrow();
    expect((await c.call('GET', path, undefined, bearer)).body.metadata['current-snapshot-id']).toBe(60);
    // One answer dropped: the next commit is answered.
    expect((await c.call('POST', path, { requirements: [], updates: appendUpdates(61, 60, 2) }, bearer)).status).toBe(200);
  });
});
