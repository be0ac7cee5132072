/**
 * Issue 34: every table metadata file a run writes validates against the spec's v2 table metadata:
 * the Iceberg REST catalog OpenAPI's TableMetadata schema (apache/iceberg
 * open-api/rest-catalog-open-api.yaml) with the fields apache/iceberg format/spec.md requires in v2
 * (test/iceberg/fixtures/*.schema.json, validated with ajv). The same check runs before every
 * icebird read of the tests (test/helpers/iceberg.ts icebirdRows), so each metadata file any test
 * writes is validated; here: after two appends and a --force, and the check names what a file
 * that departs from it lacks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { tableMetadataProblems } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 3_000 });
const tmp = useTempDir('iceberg-metadata-schema-');
const out = () => join(tmp.dir, 'out');
const job = (to: string) => ({
  name: 'metaschema',
  source: { base_url: 'sandbox', chains: [1, 8453] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to, chunk: '1d' },
});

beforeAll(async () => {
  for (const [to, force] of [
    ['2024-02-03', false],
    ['2024-02-04', false],
    ['2024-02-04', true],
  ] as const) {
    const r = await exportJob({ job: job(to), dir: tmp.dir, sandbox, destination: out(), flags: { format: 'iceberg' }, force });
    expect(r.iceberg_commits).toHaveLength(1);
  }
});

const metadataFiles = () => listFiles(out()).filter((f) => /^transactions\/metadata\/v\d+\.metadata\.json$/.test(f));
const read = (file: string) => JSON.parse(readFileSync(join(out(), file), 'utf8')) as Record<string, any>;

describe('the metadata files of a table after two appends and a --force', () => {
  it('each validates against the REST catalog TableMetadata schema and the v2 required fields', async () => {
    expect(metadataFiles()).toEqual([1, 2, 3].map((v) => `transactions/metadata/v${v}.metadata.json`));
    for (const file of metadataFiles()) expect(tableMetadataProblems(read(file)), file).toEqual([]);
    // What the schema cannot say: the main branch is the current snapshot, sequence numbers and ids stay within their last ones.
    const { meta } = (await readCurrentVersion(new LocalStore(out()), 'transactions'))!;
    expect(meta.refs.main).toEqual({ 'snapshot-id': meta['current-snapshot-id'], type: 'branch' });
    expect(meta['last-sequence-number']).toBe(Math.max(...meta.snapshots.map((s) => s['sequence-number'])));
    expect(meta['last-column-id']).toBe(Math.max(...meta.schemas.flatMap((s) => s.fields.map((f) => f.id))));
    expect(meta['last-partition-id']).toBe(Math.max(...meta['partition-specs'].flatMap((s) => s.fields.map((f) => f['field-id']))));
  });

  type Meta = Record<string, any>;
  const departures: [string, (m: Meta) => void, string][] = [
    ['a v2 required field missing', (m) => delete m['last-sequence-number'], "/ must have required property 'last-sequence-number'"],
    [
      'a snapshot without its sequence number',
      (m) => delete m.snapshots[0]['sequence-number'],
      "/snapshots/0 must have required property 'sequence-number'",
    ],
    ['another format version', (m) => void (m['format-version'] = 1), '/format-version must be equal to constant'],
    [
      'a snapshot id as a string',
      (m) => void (m['current-snapshot-id'] = String(m['current-snapshot-id'])),
      '/current-snapshot-id must be integer',
    ],
    [
      'an operation the spec does not know',
      (m) => void (m.snapshots[0].summary.operation = 'upsert'),
      '/snapshots/0/summary/operation must be equal to one of the allowed values',
    ],
    ['a schema field without its id', (m) => delete m.schemas[0].fields[0].id, "/schemas/0/fields/0 must have required property 'id'"],
  ];
  it.each(departures)('names %s', (_, change, problem) => {
    const meta = read(metadataFiles().at(-1)!);
    change(meta);
    expect(tableMetadataProblems(meta)).toContain(problem);
  });
});
