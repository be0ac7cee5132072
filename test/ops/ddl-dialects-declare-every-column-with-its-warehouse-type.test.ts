/**
 * Athena, BigQuery and Snowflake DDL (no such warehouse runs here, so the statements are checked
 * for what they must say): every column of the model with its type in that dialect, uint256 as a
 * string type, the Hive partition columns, the table prefix; layouts a warehouse cannot read are
 * refused with a typed error, and the CLI exits 2 on them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ColumnType } from '../../src/columns/columns.js';
import { loadJob } from '../../src/job/index.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { exportLayout, generateDdl, UnsupportedLayoutError, type Dialect, type TableSpec } from '../../src/warehouse/ddl.js';
import { jobTables } from '../../src/run/tables.js';
import { baseEnv, runCli } from './helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const tmp = useTempDir('ops-ddl-dialects-');
let jobFile: string;
let tables: TableSpec[];

beforeAll(async () => {
  jobFile = join(tmp.dir, 'job.yaml');
  await writeFile(
    jobFile,
    stringify({
      name: 'dialects',
      source: { base_url: 'https://insight.example.com/v1', chains: [1, 8453] },
      targets: [
        { wallet: '0x344940aef33a4e9915b793dfe282f3727eff9869', datasets: ['transactions'] },
        { contract: '0x77f5e148a71be22cf4f3a1816626b240547b6302', events: [TRANSFER] },
      ],
      range: { from: '2024-02-01', to: '2024-02-05', chunk: '1d' },
      output: { destination: 's3://analytics-bucket/insight' },
    }),
  );
  tables = await jobTables(await loadJob(jobFile));
});

/** What each dialect must call each column type (independent of src/warehouse's tables). */
const TYPES: Record<Exclude<Dialect, 'duckdb'>, Record<ColumnType, RegExp>> = {
  athena: {
    int32: /^int$/,
    int64: /^bigint$/,
    uint256: /^string$/,
    string: /^string$/,
    bool: /^boolean$/,
    timestamp: /^timestamp$/,
    date: /^date$/,
    json: /^string$/,
  },
  bigquery: {
    int32: /^INT64$/,
    int64: /^INT64$/,
    uint256: /^STRING$/,
    string: /^STRING$/,
    bool: /^BOOL$/,
    timestamp: /^TIMESTAMP$/,
    date: /^DATE$/,
    json: /^STRING$/,
  },
  snowflake: {
    int32: /^NUMBER\(10,0\)$/,
    int64: /^NUMBER\(19,0\)$/,
    uint256: /^VARCHAR$/,
    string: /^VARCHAR$/,
    bool: /^BOOLEAN$/,
    timestamp: /^TIMESTAMP_TZ$/,
    date: /^DATE$/,
    json: /^VARCHAR$/,
  },
};

function ddlFor(dialect: Dialect, format: 'parquet' | 'ndjson' = 'parquet'): string {
  return generateDdl({
    dialect,
    tables,
    layout: exportLayout(DEFAULT_PARTITIONING, 'dialects'),
    location: 's3://analytics-bucket/insight',
    format,
    compression: format === 'parquet' ? 'zstd' : 'gzip',
    chains: [1, 8453],
    firstDate: '2024-02-01',
    jobName: 'dialects',
  });
}

/** The column lines of one table's CREATE statement: name -> declared type. */
function declaredColumns(ddl: string, table: string): Map<string, string> {
  const start = ddl.split('\n').findIndex((l) => /^CREATE .*TABLE/.test(l) && l.includes(table));
  expect(start, `no CREATE for ${table}`).toBeGreaterThanOrEqual(0);
  const out = new Map<string, string>();
  for (const line of ddl.split('\n').slice(start + 1)) {
    if (!line.startsWith('  ')) break;
    const m = /^\s+[`"]?([A-Za-z0-9_]+)[`"]?\s+([A-Za-z0-9_(),]+?)(?:\s+AS\s+\(.*\))?,?$/.exec(line);
    expect(m, line).not.toBeNull();
    out.set(m![1]!, m![2]!);
  }
  return out;
}

describe.each(['athena', 'bigquery', 'snowflake'] as const)('%s DDL', (dialect) => {
  it("declares every column of every table with the dialect's type, chain_id and date as partitions", () => {
    const ddl = ddlFor(dialect);
    expect(tables.map((t) => t.name).sort()).toEqual([eventTableForSignature(TRANSFER), 'transactions']);
    for (const t of tables) {
      const declared = declaredColumns(ddl, t.name);
      for (const c of t.columns) {
        if (c.name === 'chain_id' && dialect !== 'snowflake') continue;
        expect(declared.get(c.name), `${t.name}.${c.name}`).toMatch(TYPES[dialect][c.type]);
      }
      if (dialect === 'snowflake') {
        expect(declared.get('chain_id')).toMatch(TYPES.snowflake.int64);
        expect(declared.get('date')).toBe('DATE');
      } else {
        expect(declared.has('chain_id')).toBe(false); // a partition column, declared once below
      }
      expect(t.columns.some((c) => c.type === 'uint256')).toBe(true);
    }
    expect(
      ddl
        .split('\n')
        .filter((l) => !l.startsWith('--'))
        .join('\n'),
    ).not.toMatch(/DECIMAL|NUMERIC|NUMBER\(38/i);
  });

  it('points each table at its Hive-partitioned prefix', () => {
    const ddl = ddlFor(dialect);
    for (const t of tables) {
      if (dialect === 'athena') {
        expect(ddl).toContain(`LOCATION 's3://analytics-bucket/insight/${t.name}/'`);
        expect(ddl).toContain(
          `'storage.location.template' = 's3://analytics-bucket/insight/${t.name}/chain_id=\${chain_id}/date=\${date}/'`,
        );
      } else if (dialect === 'bigquery') {
        expect(ddl).toContain(`hive_partition_uri_prefix = 's3://analytics-bucket/insight/${t.name}'`);
      } else {
        expect(ddl).toContain(`LOCATION = @dialects_export/${t.name}/`);
      }
    }
    if (dialect === 'athena') {
      expect(ddl).toContain('PARTITIONED BY (`chain_id` bigint, `date` date)');
      expect(ddl).toContain(`'projection.chain_id.values' = '1,8453'`);
      expect(ddl).toContain(`'projection.date.range' = '2024-02-01,NOW'`);
    } else if (dialect === 'bigquery') {
      expect(ddl).toContain('WITH PARTITION COLUMNS (`chain_id` INT64, `date` DATE)');
    } else {
      expect(ddl).toContain('PARTITION BY (chain_id, "date")');
      expect(ddl).toMatch(
        /chain_id NUMBER\(19,0\) AS \(TO_NUMBER\(SPLIT_PART\(SPLIT_PART\(METADATA\$FILENAME, '\/chain_id=', 2\), '\/', 1\)\)\)/,
      );
      expect(ddl).toContain(`"value" VARCHAR AS (VALUE:"value"::VARCHAR)`);
    }
  });

  it('reads NDJSON.gz when the export is NDJSON', () => {
    const ddl = ddlFor(dialect, 'ndjson');
    if (dialect === 'athena') expect(ddl).toContain('org.openx.data.jsonserde.JsonSerDe');
    if (dialect === 'bigquery') expect(ddl).toMatch(/format = 'NEWLINE_DELIMITED_JSON',[\s\S]*compression = 'GZIP'/);
    if (dialect === 'snowflake') expect(ddl).toContain('FILE_FORMAT = (TYPE = JSON, COMPRESSION = GZIP)');
    expect(ddl).not.toMatch(/PARQUET/);
  });
});

describe('layouts', () => {
  it('takes the table folder from the template up to {dataset}, {job} included', () => {
    const layout = exportLayout('{job}/{dataset}/year={year}/chain_id={chain_id}', 'myjob');
    expect(layout.tableDir('transactions')).toBe('myjob/transactions');
    expect(layout.partitions.map((p) => [p.name, p.type])).toEqual([
      ['year', 'string'],
      ['chain_id', 'int64'],
    ]);
  });

  it.each([
    ['{dataset}/{date}', /not a Hive partition/],
    ['chain_id={chain_id}/{dataset}/date={date}', /before the table folder/],
    ['chain_id={chain_id}/date={date}', /no \{dataset\} folder/],
  ])('refuses %s with a typed error', (template, message) => {
    expect(() => exportLayout(template, 'j')).toThrow(UnsupportedLayoutError);
    expect(() => exportLayout(template, 'j')).toThrow(message);
  });

  it('the CLI exits 2 for a warehouse over a local directory and for a non-Hive layout', async () => {
    const local = await runCli(['ddl', jobFile, '--dialect', 'athena', '--destination', join(tmp.dir, 'out')], baseEnv());
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/athena reads object storage/);
    const layout = await runCli(['ddl', jobFile, '--dialect', 'duckdb', '--partitioning', '{dataset}/{date}'], baseEnv());
    expect(layout.code).toBe(2);
    expect(layout.stderr).toMatch(/not a Hive partition/);
  });
});
