import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  CatalogAuthError,
  CatalogCommitConflictError,
  CatalogNotFoundError,
  CommitStateUnknownError,
  RestCatalogClient,
  mainSnapshotId,
  type CatalogSnapshot,
  type TableUpdate,
} from '../../src/iceberg/catalog/index.js';
import { ExitCode } from '../../src/errors.js';
import { createTableRequest, useCatalogSandbox } from '../helpers/catalog-sandbox.js';

// The exporter's catalog client against the sandbox's catalog, which requires a prefix and OAuth2
// client credentials; every request and answer is checked against the spec after each test.
const SECRET = 'client-secret-never-printed';
const c = useCatalogSandbox({ prefix: 'wh-client', auth: { clientId: 'exporter', clientSecret: SECRET } });

function client(over: { secret?: string; timeoutMs?: number } = {}): RestCatalogClient {
  const uri = c.sandbox.catalog.url;
  const auth = {
    kind: 'oauth2' as const,
    clientId: 'exporter',
    clientSecret: over.secret ?? SECRET,
    tokenUrl: `${uri}/v1/oauth/tokens`,
    scope: 'catalog',
  };
  return new RestCatalogClient({ uri, warehouse: 'demo', auth, timeoutMs: over.timeoutMs });
}

const id = { namespace: ['demo'], name: 'events' };
function append(snapshotId: number, parent: number | null, sequence: number): TableUpdate[] {
  const snapshot: CatalogSnapshot = {
    'snapshot-id': snapshotId,
    ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': sequence,
    'timestamp-ms': 1_760_000_000_000 + sequence,
    'manifest-list': `file:///w/events/metadata/snap-${snapshotId}.avro`,
    summary: { operation: 'append' },
    'schema-id': 0,
  };
  return [
    { action: 'add-snapshot', snapshot },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
  ];
}

/** An append committed as the exporter will: asserting the table's uuid and main's snapshot as loaded. */
async function commitNext(cl: RestCatalogClient, snapshotId: number) {
  const { metadata } = await cl.loadTable(id);
  const main = mainSnapshotId(metadata);
  const sequence = (metadata.snapshots?.length ?? 0) + 1;
  return cl.commitTable(
    id,
    [
      { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': main },
    ],
    append(snapshotId, main, sequence),
  );
}

describe('the catalog client', () => {
  it('creates the namespace and the table when missing, loads and commits through the prefix /v1/config gives', async () => {
    const cl = client();
    expect(await cl.namespaceExists(['demo'])).toBe(false);
    await cl.createNamespace(['demo']);
    expect(await cl.tableExists(id)).toBe(false);
    await expect(cl.loadTable(id)).rejects.toBeInstanceOf(CatalogNotFoundError);
    const created = await cl.createTable(['demo'], createTableRequest('events') as never);
    expect(created.metadataLocation).toMatch(/00001-.*\.metadata\.json$/);
    const committed = await commitNext(cl, 1);
    expect(committed.metadata['current-snapshot-id']).toBe(1);
    expect(committed.metadataLocation).toMatch(/00002-.*\.metadata\.json$/);
    expect(await cl.listTables(['demo'])).toEqual([id]);
    expect(c.exchanges.every((e) => e.path.startsWith('/v1/wh-client/') || !e.path.includes('namespaces'))).toBe(true);
  });

  it('turns a 409 into a retryable conflict, and a commit answered 5xx into "state unknown" that a re-load resolves', async () => {
    const cl = client();
    const { metadata } = await cl.loadTable(id);
    await commitNext(cl, 2); // another writer moves main
    const stale = cl.commitTable(
      id,
      [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': mainSnapshotId(metadata) }],
      append(3, 1, 3),
    );
    await expect(stale).rejects.toBeInstanceOf(CatalogCommitConflictError);
    await expect(stale).rejects.toMatchObject({ retryable: true });
    c.sandbox.catalog.set({ commitFaults: [502] });
    const unknown = commitNext(cl, 3);
    await expect(unknown).rejects.toBeInstanceOf(CommitStateUnknownError);
    expect((await cl.loadTable(id)).metadata['current-snapshot-id']).toBe(3); // it landed
  });

  it('treats a commit whose answer never came as "state unknown" (here the catalog applied it after the client gave up)', async () => {
    const impatient = client({ timeoutMs: 150 });
    const { metadata } = await impatient.loadTable(id); // its token and the prefix fetched before the catalog slows down
    const main = mainSnapshotId(metadata);
    c.sandbox.catalog.set({ latencyMs: 400 });
    try {
      const requirements = [{ type: 'assert-ref-snapshot-id' as const, ref: 'main', 'snapshot-id': main }];
      const lost = impatient.commitTable(id, requirements, append(4, main, metadata.snapshots!.length + 1));
      await expect(lost).rejects.toBeInstanceOf(CommitStateUnknownError);
    } finally {
      c.sandbox.catalog.set({ latencyMs: 0 });
    }
    await new Promise((r) => setTimeout(r, 400));
    expect((await client().loadTable(id)).metadata['current-snapshot-id']).toBe(4);
  });

  it('fetches a new OAuth2 token after a 401 and goes on; refused credentials exit 2 without the secret in the message', async () => {
    const cl = client();
    await cl.loadTable(id);
    c.sandbox.catalog.set({ expireTokens: 1 });
    const tokensBefore = c.exchanges.filter((e) => e.path === '/v1/oauth/tokens').length;
    expect((await cl.loadTable(id)).metadata['table-uuid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.exchanges.filter((e) => e.path === '/v1/oauth/tokens').length).toBe(tokensBefore + 1);
    const refused = await client({ secret: 'wrong-secret' })
      .loadTable(id)
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(CatalogAuthError);
    expect((refused as CatalogAuthError).exitCode).toBe(ExitCode.badInput);
    expect(String((refused as Error).message)).not.toContain('wrong-secret');
    expect(JSON.stringify(refused)).not.toContain(SECRET);
  });
});

describe('the catalog client with AWS SigV4', () => {
  it('signs each request with the signing name and region (AWS4-HMAC-SHA256)', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"defaults":{},"overrides":{}}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/iceberg`;
      const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
      await new RestCatalogClient({ uri, auth: { kind: 'sigv4', region: 'us-east-1', signingName: 'glue', credentials } }).config();
      const auth = seen[0]!.authorization!;
      expect(auth).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/glue\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date/,
      );
      expect(auth).toMatch(/Signature=[0-9a-f]{64}$/);
      expect(seen[0]!['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
      expect(auth).not.toContain(credentials.secretAccessKey);
    } finally {
      server.close();
    }
  });
});
