import { describe, expect, it } from 'vitest';
import { IcebergRestCatalog, type CreateTableRequest } from 'iceberg-js';
import { appendUpdates, createTableRequest, useCatalogSandbox } from '../helpers/catalog-sandbox.js';

// iceberg-js (npm, written by others; it declares node >= 22 and runs on 20 here) as the
// independent client of the sandbox's catalog: through a required prefix from /v1/config and a
// bearer token, as a real catalog is reached.
const c = useCatalogSandbox({ prefix: 'wh-js', auth: { token: 'js-token' } });
const catalog = () =>
  new IcebergRestCatalog({ baseUrl: c.sandbox.catalog.url, warehouse: 'demo', auth: { type: 'bearer', token: 'js-token' } });

describe('iceberg-js against the sandbox catalog', () => {
  it('creates a namespace and a table, lists and loads them', async () => {
    const js = catalog();
    await js.createNamespace({ namespace: ['js'] }, { properties: { owner: 'iceberg-js' } });
    expect(await js.namespaceExists({ namespace: ['js'] })).toBe(true);
    expect((await js.listNamespaces()).namespaces).toEqual([{ namespace: ['js'] }]);
    const created = await js.createTable({ namespace: ['js'] }, createTableRequest('events') as unknown as CreateTableRequest);
    expect(created['current-schema-id']).toBe(0);
    expect((await js.listTables({ namespace: ['js'] })).identifiers).toEqual([{ namespace: ['js'], name: 'events' }]);
    const loaded = await js.loadTable({ namespace: ['js'], name: 'events' });
    expect(loaded['table-uuid']).toBe(created['table-uuid']);
    expect(loaded.schemas[0]!.fields.map((f) => f.name)).toEqual(['chain_id', 'block_time', 'hash']);
  });

  it('loads the snapshot a commit made current, and commits with its typed requirements and updates', async () => {
    const js = catalog();
    const id = { namespace: ['js'], name: 'events' };
    const before = await js.loadTable(id);
    // A commit as the exporter sends it, over plain HTTP.
    const path = '/v1/wh-js/namespaces/js/tables/events';
    const requirements = [{ type: 'assert-table-uuid', uuid: before['table-uuid'] }];
    const committed = await c.call(
      'POST',
      path,
      { requirements, updates: appendUpdates(7, undefined, 1) },
      { authorization: 'Bearer js-token' },
    );
    expect(committed.status).toBe(200);
    const after = await js.loadTable(id);
    expect(after['current-snapshot-id']).toBe(7);
    expect(after.snapshots?.map((s) => s['snapshot-id'])).toEqual([7]);
    // iceberg-js's own commit, refused when stale.
    const ok = await js.commitTable(id, {
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 7 }],
      updates: [{ action: 'set-properties', updates: { 'written-by': 'iceberg-js' } }],
    });
    expect(ok.metadata.properties['written-by']).toBe('iceberg-js');
    await expect(
      js.commitTable(id, { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 6 }], updates: [] }),
    ).rejects.toMatchObject({ status: 409 });
    await js.dropTable(id);
    expect(await js.tableExists(id)).toBe(false);
  });
});
