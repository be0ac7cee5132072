/**
 * Issue 34: for an Iceberg destination, `ddl` prints per engine the statements that read or
 * register each table by its current metadata file (read from the destination): DuckDB
 * iceberg_scan, Snowflake CREATE ICEBERG TABLE ... METADATA_FILE_PATH and REFRESH, Athena's Glue
 * entry with metadata_location, BigQuery's BigLake table of format ICEBERG.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 37, transactions: 2_000 });
const tmp = useTempDir('iceberg-ddl-');
const job = {
  name: 'iceddl',
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
  output: { format: 'iceberg' },
};

const out = () => join(tmp.dir, 'out');
const ddl = (dialect: string, ...more: string[]) =>
  runCli(['ddl', join(tmp.dir, 'job.yaml'), '--dialect', dialect, '--destination', out(), ...more]);

describe('ddl of an iceberg destination', () => {
  beforeAll(async () => {
    expect((await exportJob({ job, dir: tmp.dir, sandbox, destination: out() })).status).toBe('succeeded');
    expect(
      (await exportJob({ job: { ...job, range: { ...job.range, to: '2024-02-04' } }, dir: tmp.dir, sandbox, destination: out() })).status,
    ).toBe('succeeded');
  });

  it('DuckDB: a view over iceberg_scan of the current metadata file', async () => {
    const r = await ddl('duckdb');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('LOAD iceberg;');
    expect(r.stdout).toContain(
      `CREATE OR REPLACE VIEW "transactions" AS\nSELECT * FROM iceberg_scan('${out()}/transactions/metadata/v2.metadata.json');`,
    );
  });

  it.each([
    [
      'snowflake',
      [
        "METADATA_FILE_PATH = 'transactions/metadata/v2.metadata.json';",
        "ALTER ICEBERG TABLE transactions REFRESH 'transactions/metadata/v2.metadata.json';",
      ],
    ],
    ['athena', ['"metadata_location":"s3://lake/insight/transactions/metadata/v2.metadata.json"', '"table_type":"ICEBERG"']],
    ['bigquery', ["format = 'ICEBERG'", "uris = ['s3://lake/insight/transactions/metadata/v2.metadata.json']"]],
  ])('%s: the table registered by its current metadata file', async (dialect, lines) => {
    const r = await ddl(dialect, '--location', 's3://lake/insight');
    expect(r.code, r.stderr).toBe(0);
    for (const line of lines) expect(r.stdout).toContain(line);
  });

  it('a table no run committed yet is said to have no snapshot', async () => {
    const r = await runCli(['ddl', join(tmp.dir, 'job.yaml'), '--dialect', 'duckdb', '--destination', join(tmp.dir, 'empty')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('-- transactions: no snapshot yet (run the job first)');
  });
});
