/**
 * A sandbox whose Iceberg REST catalog (at /iceberg) records every request and answer, each checked
 * against the protocol's OpenAPI schemas after every test (helpers/iceberg-rest-spec.ts); and the
 * bodies of the requests an exporter sends: a table with a schema and a partition spec, a snapshot.
 */
import { IcebergRestCatalog } from 'iceberg-js';
import { afterEach, expect } from 'vitest';
import type { CatalogExchange, CatalogOptions, Sandbox } from '@insight-export/sandbox';
import { useSandbox } from './sandbox.js';
import { IcebergRestSpec } from './iceberg-rest-spec.js';

let spec: IcebergRestSpec | undefined;

/** The spec's validator, built once per worker (compiling the spec takes a while). */
export function restSpec(): IcebergRestSpec {
  return (spec ??= new IcebergRestSpec());
}

export interface CatalogSandbox {
  sandbox: Sandbox;
  /** The exchanges of the current test. */
  exchanges: CatalogExchange[];
  /** GET/POST/DELETE/HEAD below the catalog's root; the body parsed (null without one). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

/**
 * Starts a small sandbox for the file with these catalog options; after each test, every exchange
 * of that test validates against the spec (its paths carry `prefix` when the catalog requires one).
 */
export function useCatalogSandbox(opts: Omit<CatalogOptions, 'onExchange'> = {}): CatalogSandbox {
  const exchanges: CatalogExchange[] = [];
  const sandbox = useSandbox({ transactions: 300, catalog: { ...opts, onExchange: (e) => exchanges.push(e) } });
  afterEach(() => {
    const problems = exchanges.flatMap((e) => restSpec().problems(e, opts.prefix));
    exchanges.length = 0;
    expect(problems).toEqual([]);
  });
  return {
    sandbox,
    exchanges,
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${sandbox.catalog.url}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? null : JSON.parse(text) };
    },
  };
}

/** A CreateTableRequest as an exporter sends it: field ids, a day partition, a location. */
export function createTableRequest(name: string, location?: string): Record<string, unknown> {
  return {
    name,
    ...(location ? { location } : {}),
    schema: {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'chain_id', required: true, type: 'long' },
        { id: 2, name: 'block_time', required: true, type: 'timestamptz' },
        { id: 3, name: 'hash', required: true, type: 'string' },
      ],
    },
    'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'block_day', transform: 'day' }] },
    properties: { 'format-version': '2' },
  };
}

/** The updates of one append: add-snapshot and main set to it. */
export function appendUpdates(snapshotId: number, parent: number | undefined, sequence: number): Record<string, unknown>[] {
  return [
    {
      action: 'add-snapshot',
      snapshot: {
        'snapshot-id': snapshotId,
        ...(parent === undefined ? {} : { 'parent-snapshot-id': parent }),
        'sequence-number': sequence,
        'timestamp-ms': 1_760_000_000_000 + sequence,
        'manifest-list': `file:///warehouse/t/metadata/snap-${snapshotId}.avro`,
        summary: { operation: 'append', 'added-records': '10' },
        'schema-id': 0,
      },
    },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
  ];
}

/** iceberg-js (written by others) on the sandbox's catalog: what a reader or another writer sees. */
export function icebergJs(sandbox: Sandbox, warehouse?: string): IcebergRestCatalog {
  return new IcebergRestCatalog({ baseUrl: sandbox.catalog.url, ...(warehouse ? { warehouse } : {}), auth: { type: 'none' } });
}

export interface AnotherWriter {
  namespace: string;
  table: string;
  /** The id of the other writer's snapshot. */
  snapshotId: number;
  /** Properties the other writer sets in the same commit. */
  properties?: Record<string, string>;
  /** The warehouse iceberg-js names (the catalog's prefix comes from its config). */
  warehouse?: string;
}

/**
 * Another writer moves `main` of the table between the run's first load of it (the one GET of a
 * commit attempt, which also decides the version the state is read at) and its commit, so the
 * catalog answers the run's stale requirement 409. The other writer's snapshot lists the same
 * manifests as main's (a valid table), with none of the run's summary. The exchanges are still
 * recorded; the returned function puts back the recording alone.
 */
export function anotherWriterCommitsOnFirstLoad(c: CatalogSandbox, w: AnotherWriter): () => void {
  let loads = 0;
  c.sandbox.catalog.set({
    onExchange: (e) => {
      c.exchanges.push(e);
      if (e.method !== 'GET' || !e.path.endsWith(`/${w.namespace}/tables/${w.table}`) || ++loads !== 1) return;
      const meta = (e.response as { metadata: Record<string, any> }).metadata;
      const main = meta.snapshots.find((x: { 'snapshot-id': number }) => x['snapshot-id'] === meta.refs.main['snapshot-id']);
      const snapshot = {
        ...main,
        'snapshot-id': w.snapshotId,
        'parent-snapshot-id': main['snapshot-id'],
        'sequence-number': meta['last-sequence-number'] + 1,
        summary: { operation: 'append' },
      };
      void icebergJs(c.sandbox, w.warehouse).commitTable({ namespace: [w.namespace], name: w.table }, {
        requirements: [],
        updates: [
          { action: 'add-snapshot', snapshot },
          { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': w.snapshotId },
          ...(w.properties ? [{ action: 'set-properties', updates: w.properties }] : []),
        ],
      } as never);
    },
  });
  return () => c.sandbox.catalog.set({ onExchange: (e) => c.exchanges.push(e) });
}

/** Whether the catalog answered a commit to the table with `status` (in the current test). */
export function commitAnswered(c: CatalogSandbox, namespace: string, table: string, status: number): boolean {
  return c.exchanges.some((e) => e.method === 'POST' && e.path.endsWith(`/${namespace}/tables/${table}`) && e.status === status);
}
