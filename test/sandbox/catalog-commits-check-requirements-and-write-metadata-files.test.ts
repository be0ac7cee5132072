import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { appendUpdates, createTableRequest, useCatalogSandbox } from '../helpers/catalog-sandbox.js';

const c = useCatalogSandbox();
const TABLE = '/v1/namespaces/demo/tables/transactions';

async function createDemoTable(name = 'transactions') {
  await c.call('POST', '/v1/namespaces', { namespace: ['demo'], properties: { owner: 'tests' } });
  const created = await c.call('POST', '/v1/namespaces/demo/tables', createTableRequest(name));
  expect(created.status).toBe(200);
  return created.body;
}

describe('the sandbox catalog: namespaces and tables', () => {
  it('creates, loads, lists, checks and drops namespaces and tables', async () => {
    expect((await c.call('GET', '/v1/config')).status).toBe(200);
    expect((await c.call('HEAD', '/v1/namespaces/demo')).status).toBe(404);
    const created = await createDemoTable();
    expect(created.metadata['table-uuid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata['last-column-id']).toBe(3);
    expect(created.metadata['partition-specs'][0].fields[0]['field-id']).toBe(1000);
    expect((await c.call('POST', '/v1/namespaces', { namespace: ['demo'] })).status).toBe(409);
    expect((await c.call('POST', '/v1/namespaces/demo/tables', createTableRequest('transactions'))).status).toBe(409);
    expect((await c.call('GET', '/v1/namespaces')).body).toEqual({ namespaces: [['demo']] });
    expect((await c.call('GET', '/v1/namespaces/demo')).body).toEqual({ namespace: ['demo'], properties: { owner: 'tests' } });
    expect((await c.call('GET', '/v1/namespaces/demo/tables')).body).toEqual({
      identifiers: [{ namespace: ['demo'], name: 'transactions' }],
    });
    expect((await c.call('HEAD', TABLE)).status).toBe(204);
    const loaded = await c.call('GET', TABLE);
    expect(loaded.body['metadata-location']).toBe(created['metadata-location']);
    expect((await c.call('DELETE', '/v1/namespaces/demo')).status).toBe(409); // not empty
    expect((await c.call('DELETE', TABLE)).status).toBe(204);
    expect((await c.call('GET', TABLE)).body.error.type).toBe('NoSuchTableException');
    expect((await c.call('DELETE', '/v1/namespaces/demo')).status).toBe(204);
    expect((await c.call('GET', '/v1/namespaces/demo/tables')).status).toBe(404);
  });
});

describe('the sandbox catalog: commits', () => {
  it('writes a new metadata file per commit and keeps the previous ones in the metadata-log', async () => {
    const created = await createDemoTable('commits');
    const path = '/v1/namespaces/demo/tables/commits';
    const uuid = created.metadata['table-uuid'];
    const first = await c.call('POST', path, {
      requirements: [
        { type: 'assert-table-uuid', uuid },
        { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
      ],
      updates: appendUpdates(11, undefined, 1),
    });
    expect(first.status).toBe(200);
    expect(first.body.metadata['current-snapshot-id']).toBe(11);
    const second = await c.call('POST', path, {
      requirements: [
        { type: 'assert-table-uuid', uuid },
        { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 11 },
        { type: 'assert-current-schema-id', 'current-schema-id': 0 },
        { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 },
      ],
      updates: [...appendUpdates(12, 11, 2), { action: 'set-properties', updates: { 'insight-export.windows': 'w2' } }],
    });
    expect(second.status).toBe(200);
    const files = [created['metadata-location'], first.body['metadata-location'], second.body['metadata-location']];
    expect(files.map((f: string) => /\/metadata\/(\d{5})-[0-9a-f-]{36}\.metadata\.json$/.exec(f)?.[1])).toEqual([
      '00001',
      '00002',
      '00003',
    ]);
    for (const f of files) expect(existsSync(fileURLToPath(f))).toBe(true);
    const onDisk = JSON.parse(readFileSync(fileURLToPath(files[2]), 'utf8'));
    expect(onDisk).toEqual(second.body.metadata);
    expect(onDisk['metadata-log'].map((e: { 'metadata-file': string }) => e['metadata-file'])).toEqual(files.slice(0, 2));
    expect(onDisk['snapshot-log'].map((e: { 'snapshot-id': number }) => e['snapshot-id'])).toEqual([11, 12]);
    expect(onDisk.properties['insight-export.windows']).toBe('w2');
    expect((await c.call('GET', path)).body['metadata-location']).toBe(files[2]);
  });

  it('answers 409 to a requirement the table no longer meets, and changes nothing', async () => {
    const created = await createDemoTable('stale');
    const path = '/v1/namespaces/demo/tables/stale';
    await c.call('POST', path, { requirements: [], updates: appendUpdates(21, undefined, 1) });
    const stale = [
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 20 },
      { type: 'assert-table-uuid', uuid: '00000000-0000-4000-8000-000000000000' },
      { type: 'assert-current-schema-id', 'current-schema-id': 1 },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 2 },
      { type: 'assert-create' },
    ];
    const before = (await c.call('GET', path)).body['metadata-location'];
    for (const requirement of stale) {
      const answer = await c.call('POST', path, { requirements: [requirement], updates: appendUpdates(22, 21, 2) });
      expect([requirement.type, answer.status, answer.body.error.type]).toEqual([requirement.type, 409, 'CommitFailedException']);
    }
    expect((await c.call('GET', path)).body['metadata-location']).toBe(before);
    expect(created.metadata['table-uuid']).not.toBe(stale[2]!.uuid);
  });

  it('evolves the schema (add-schema, set-current-schema -1) and removes snapshots', async () => {
    await createDemoTable('evolve');
    const path = '/v1/namespaces/demo/tables/evolve';
    await c.call('POST', path, { requirements: [], updates: appendUpdates(31, undefined, 1) });
    await c.call('POST', path, { requirements: [], updates: appendUpdates(32, 31, 2) });
    const fields = createTableRequest('x').schema as { fields: unknown[] };
    const evolved = await c.call('POST', path, {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      updates: [
        {
          action: 'add-schema',
          schema: { type: 'struct', 'schema-id': 1, fields: [...fields.fields, { id: 4, name: 'value', required: false, type: 'string' }] },
        },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'remove-snapshots', 'snapshot-ids': [31] },
      ],
    });
    expect(evolved.status).toBe(200);
    const m = evolved.body.metadata;
    expect([m['current-schema-id'], m['last-column-id'], m.schemas.length]).toEqual([1, 4, 2]);
    expect(m.snapshots.map((s: { 'snapshot-id': number }) => s['snapshot-id'])).toEqual([32]);
    expect(m['current-snapshot-id']).toBe(32);
  });

  it('creates a table by a commit with assert-create', async () => {
    await c.call('POST', '/v1/namespaces', { namespace: ['staged'] });
    const created = await c.call('POST', '/v1/namespaces/staged/tables/t', {
      requirements: [{ type: 'assert-create' }],
      updates: [
        { action: 'assign-uuid', uuid: '2b5e8d4a-7f0c-4a55-9d8e-0c1b2a3f4e5d' },
        { action: 'upgrade-format-version', 'format-version': 2 },
        { action: 'add-schema', schema: createTableRequest('t').schema },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'add-spec', spec: { 'spec-id': 0, fields: [] } },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': { 'order-id': 0, fields: [] } },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.body.metadata['table-uuid']).toBe('2b5e8d4a-7f0c-4a55-9d8e-0c1b2a3f4e5d');
    expect((await c.call('GET', '/v1/namespaces/staged/tables/t')).status).toBe(200);
  });
});

it('a warehouse on S3 without a writer is refused at start: the sandbox has no S3 client of its own', async () => {
  const { startSandbox } = await import('@insight-export/sandbox');
  await expect(startSandbox({ port: 0, transactions: 300, catalog: { warehouse: 's3://bucket/wh' } })).rejects.toThrow(
    /warehouse s3:\/\/bucket\/wh is on S3 and the sandbox has no way to write there/,
  );
});
