/**
 * CREATE statements for warehouses over an export: one external table (DuckDB: a view) per
 * table folder, over the Hive-partitioned prefix, with the exact column types of the dataset
 * modules (through the sink's type table, src/sink/column-types.ts), so the output can be queried
 * at once. Dialects: Athena, DuckDB, BigQuery, Snowflake.
 *
 * uint256 columns stay strings in every dialect: DECIMAL(38,0) (Athena, Snowflake NUMBER) and
 * BigQuery BIGNUMERIC hold at most 38 integer digits, uint256 values have up to 78.
 */
import type { Column, ColumnType } from '../columns/columns.js';
import { isoDate } from '../columns/columns.js';
import { duckdbType } from '../sink/column-types.js';
import type { Compression, OutputFormat } from '../sink/sink.js';
import { UserInputError } from '../errors.js';
import { renderPartition, type PartitionPlaceholder } from '../sink/partitioning.js';
import { icebergDdl } from './iceberg-ddl.js';

export const DIALECTS = ['athena', 'duckdb', 'bigquery', 'snowflake'] as const;
export type Dialect = (typeof DIALECTS)[number];

/** One table of an export: a folder with one schema. */
export interface TableSpec {
  name: string;
  /** Dataset the table belongs to (transactions, events ...). */
  dataset: string;
  columns: Column[];
}

/** A folder level of the Hive layout below the table folder: `name=<value>`. */
export interface PartitionColumn {
  name: string;
  placeholder: PartitionPlaceholder;
  type: ColumnType;
}

export interface ExportLayout {
  /** Folder of a table relative to the export root, e.g. "transactions" or "myjob/transactions". */
  tableDir(table: string): string;
  /** Partition folders below the table folder, outermost first. */
  partitions: PartitionColumn[];
}

export class UnsupportedLayoutError extends UserInputError {
  override name = 'UnsupportedLayoutError';
}

const PARTITION_TYPES: Record<PartitionPlaceholder, ColumnType> = {
  chain_id: 'int64',
  date: 'date',
  year: 'string',
  month: 'string',
  day: 'string',
  target: 'string',
  job: 'string',
  dataset: 'string',
};

/**
 * The folder layout a partitioning template produces: the table folder is the template up to the
 * `{dataset}` folder (only `{job}` may come before it); every folder after it must be Hive style
 * (`name={placeholder}`) so warehouses can read it as a partition column.
 */
export function exportLayout(partitioning: string, jobName: string): ExportLayout {
  const segments = partitioning === '' ? [] : partitioning.split('/');
  const tableAt = segments.findIndex((s) => s.includes('{dataset}'));
  const where = `output.partitioning "${partitioning}"`;
  if (tableAt < 0) {
    throw new UnsupportedLayoutError(
      'The partitioning has no {dataset} folder, so tables share folders and no warehouse table can hold just one of them',
      {
        details: where,
        hint: 'Use a template with {dataset} first, e.g. "{dataset}/chain_id={chain_id}/date={date}" (the default).',
      },
    );
  }
  for (const s of segments.slice(0, tableAt + 1)) {
    const other = [...s.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).filter((p) => p !== 'dataset' && p !== 'job');
    if (other.length > 0) {
      throw new UnsupportedLayoutError(`The folder "${s}" comes before the table folder but depends on {${other[0]}}`, {
        details: where,
        hint: 'Only {job} may come before {dataset}; put the other placeholders after it as name={placeholder} folders.',
      });
    }
  }
  const partitions: PartitionColumn[] = segments.slice(tableAt + 1).map((s) => {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=\{([a-z_]+)\}$/.exec(s);
    if (!m) {
      throw new UnsupportedLayoutError(`The folder "${s}" is not a Hive partition (name={placeholder})`, {
        details: where,
        hint: 'Warehouses read partition columns from folders named like chain_id={chain_id} or date={date}.',
      });
    }
    const placeholder = m[2] as PartitionPlaceholder;
    return { name: m[1]!, placeholder, type: PARTITION_TYPES[placeholder] };
  });
  const head = segments.slice(0, tableAt + 1).join('/');
  return {
    tableDir: (table) => renderPartition(head, { dataset: table, job: jobName }),
    partitions,
  };
}

export interface DdlOptions {
  dialect: Dialect;
  tables: TableSpec[];
  layout: ExportLayout;
  /** Root of the export as the warehouse reads it: s3://bucket/prefix, gs://..., or a local path. */
  location: string;
  format: OutputFormat;
  compression: Compression;
  /** Schema / database / BigQuery dataset to create the tables in (optional except for BigQuery). */
  schema?: string | undefined;
  /** Chains of the job: Athena partition projection values of chain_id. */
  chains: number[];
  /** First date of the data (YYYY-MM-DD) for Athena date projection; default 2015-07-30. */
  firstDate?: string | undefined;
  /** BigQuery: connection of a BigQuery Omni (S3) external table. */
  connection?: string | undefined;
  /** Snowflake: stage over the export root; default: a stage named "<schema or job>_export" created here. */
  stage?: string | undefined;
  storageIntegration?: string | undefined;
  /** DuckDB over S3: endpoint of a non-AWS S3 server and the region. */
  s3Endpoint?: string | null | undefined;
  s3Region?: string | null | undefined;
  jobName: string;
  /** Iceberg: each table's current metadata file, relative to the root (absent: not committed yet). */
  metadataFiles?: Map<string, string> | undefined;
}

const UINT256_NOTE = 'uint256 columns are exact decimal strings: DECIMAL(38,0) would lose values over 38 digits (uint256 has up to 78).';

/** The statements, separated by blank lines, each ending with ";". */
export function generateDdl(o: DdlOptions): string {
  const root = o.location.replace(/\/+$/, '');
  const parts: string[] = [
    `-- insight-export: ${o.dialect} tables over ${root} (job ${o.jobName}, ${o.format}${o.format === 'ndjson' ? `, ${o.compression}` : ''})`,
    `-- ${UINT256_NOTE}`,
  ];
  const dir = (t: TableSpec) => `${root}/${o.layout.tableDir(t.name)}`;
  if (o.format === 'iceberg') return `${[...parts, ...icebergDdl(o, root, duckdbPreamble(o, root))].join('\n\n')}\n`;
  switch (o.dialect) {
    case 'duckdb':
      parts.push(...duckdbPreamble(o, root));
      for (const t of o.tables) parts.push(duckdbView(o, t, dir(t)));
      break;
    case 'athena':
      if (o.schema) parts.push(`CREATE DATABASE IF NOT EXISTS \`${o.schema}\`;`);
      for (const t of o.tables) parts.push(athenaTable(o, t, dir(t)));
      break;
    case 'bigquery':
      parts.push(`CREATE SCHEMA IF NOT EXISTS \`${bigQueryDataset(o)}\`;`);
      for (const t of o.tables) parts.push(bigQueryTable(o, t, dir(t)));
      break;
    case 'snowflake': {
      const stage = o.stage ?? qualified(o.schema, `${sqlName(o.jobName)}_export`, (s) => s);
      if (o.schema) parts.push(`CREATE SCHEMA IF NOT EXISTS ${o.schema};`);
      if (!o.stage) {
        parts.push(
          [
            `-- The stage over the export root; its credentials come from a storage integration (CREATE STORAGE INTEGRATION, by an account admin).`,
            `CREATE STAGE IF NOT EXISTS ${stage}`,
            `  URL = ${sqlString(`${root}/`)}`,
            `  STORAGE_INTEGRATION = ${o.storageIntegration ?? 'insight_export_s3'};`,
          ].join('\n'),
        );
      }
      for (const t of o.tables) parts.push(snowflakeTable(o, t, stage));
      break;
    }
  }
  return `${parts.join('\n\n')}\n`;
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

function sqlName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
}

function qualified(schema: string | undefined, name: string, quote: (n: string) => string): string {
  return schema ? `${schema}.${quote(name)}` : quote(name);
}

/** Data columns of a table: its columns minus those the folders hold (chain_id is both: the folder wins). */
function dataColumns(t: TableSpec, layout: ExportLayout): Column[] {
  const partition = new Set(layout.partitions.map((p) => p.name));
  return t.columns.filter((c) => !partition.has(c.name));
}

function fileGlob(o: DdlOptions): string {
  const levels = o.layout.partitions.map(() => '*/').join('');
  const ext = o.format === 'parquet' ? '.parquet' : o.compression === 'gzip' ? '.ndjson.gz' : '.ndjson';
  return `${levels}*${ext}`;
}

// ---------------------------------------------------------------- DuckDB

function duckQuote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function duckdbPreamble(o: DdlOptions, root: string): string[] {
  const out: string[] = [];
  if (root.startsWith('s3://')) {
    const opts = ['TYPE s3', 'PROVIDER credential_chain'];
    if (o.s3Region) opts.push(`REGION ${sqlString(o.s3Region)}`);
    if (o.s3Endpoint) {
      const u = new URL(o.s3Endpoint);
      opts.push(`ENDPOINT ${sqlString(u.host)}`, `URL_STYLE 'path'`, `USE_SSL ${u.protocol === 'https:' ? 'true' : 'false'}`);
    }
    out.push(
      `-- S3 access: credentials from the AWS default chain (environment, profile, instance role).\nINSTALL httpfs;\nLOAD httpfs;\nINSTALL aws;\nLOAD aws;\nCREATE OR REPLACE SECRET insight_export_s3 (${opts.join(', ')});`,
    );
  }
  if (o.schema) out.push(`CREATE SCHEMA IF NOT EXISTS ${duckQuote(o.schema)};`);
  return out;
}

function duckdbView(o: DdlOptions, t: TableSpec, dir: string): string {
  const glob = sqlString(`${dir}/${fileGlob(o)}`);
  const hiveTypes = o.layout.partitions.map((p) => `${sqlString(p.name)}: ${duckdbType({ type: p.type })}`).join(', ');
  const hive = o.layout.partitions.length > 0 ? `hive_partitioning = true, hive_types = {${hiveTypes}}` : 'hive_partitioning = false';
  let source: string;
  if (o.format === 'parquet') {
    source = `read_parquet(${glob}, ${hive}, union_by_name = true)`;
  } else {
    const cols = t.columns.map((c) => `${sqlString(c.name)}: ${sqlString(duckdbType(c))}`).join(', ');
    source = `read_json(${glob}, format = 'newline_delimited', columns = {${cols}}, ${hive}${o.compression === 'gzip' ? ", compression = 'gzip'" : ''})`;
  }
  // The files' columns in their order (DuckDB reads chain_id from the file and prunes by folder),
  // then the folders' columns the files do not have (date).
  const inFile = new Set(t.columns.map((c) => c.name));
  const select = [...t.columns.map((c) => c.name), ...o.layout.partitions.filter((p) => !inFile.has(p.name)).map((p) => p.name)]
    .map(duckQuote)
    .join(', ');
  return `CREATE OR REPLACE VIEW ${qualified(o.schema, t.name, duckQuote)} AS\nSELECT ${select}\nFROM ${source};`;
}

// ---------------------------------------------------------------- Athena (Trino/Hive DDL)

const ATHENA_TYPES: Record<ColumnType, string> = {
  int32: 'int',
  int64: 'bigint',
  uint256: 'string',
  string: 'string',
  bool: 'boolean',
  timestamp: 'timestamp',
  date: 'date',
  json: 'string',
};

function athenaTable(o: DdlOptions, t: TableSpec, dir: string): string {
  const cols = dataColumns(t, o.layout).map((c) => `  \`${c.name}\` ${ATHENA_TYPES[c.type]}`);
  const lines = [`CREATE EXTERNAL TABLE IF NOT EXISTS ${qualified(o.schema, t.name, (n) => `\`${n}\``)} (`, cols.join(',\n'), ')'];
  if (o.layout.partitions.length > 0) {
    lines.push(`PARTITIONED BY (${o.layout.partitions.map((p) => `\`${p.name}\` ${ATHENA_TYPES[p.type]}`).join(', ')})`);
  }
  if (o.format === 'parquet') {
    lines.push('STORED AS PARQUET');
  } else {
    lines.push(
      "ROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'",
      "STORED AS INPUTFORMAT 'org.apache.hadoop.mapred.TextInputFormat'",
      "OUTPUTFORMAT 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat'",
    );
  }
  lines.push(`LOCATION ${sqlString(`${dir}/`)}`);
  // Partition projection: new partitions are queryable at once, without MSCK REPAIR / ADD PARTITION.
  const props: [string, string][] = [];
  if (o.layout.partitions.length > 0) {
    props.push(['projection.enabled', 'true']);
    for (const p of o.layout.partitions) {
      if (p.placeholder === 'chain_id') {
        props.push([`projection.${p.name}.type`, 'enum'], [`projection.${p.name}.values`, o.chains.join(',')]);
      } else if (p.placeholder === 'date') {
        props.push(
          [`projection.${p.name}.type`, 'date'],
          [`projection.${p.name}.format`, 'yyyy-MM-dd'],
          [`projection.${p.name}.range`, `${o.firstDate ?? '2015-07-30'},NOW`],
          [`projection.${p.name}.interval`, '1'],
          [`projection.${p.name}.interval.unit`, 'DAYS'],
        );
      } else {
        props.push([`projection.${p.name}.type`, 'injected']);
      }
    }
    const template = o.layout.partitions.map((p) => `${p.name}=\${${p.name}}`).join('/');
    props.push(['storage.location.template', `${dir}/${template}/`]);
  }
  if (props.length > 0) lines.push(`TBLPROPERTIES (\n${props.map(([k, v]) => `  ${sqlString(k)} = ${sqlString(v)}`).join(',\n')}\n)`);
  return `${lines.join('\n')};`;
}

// ---------------------------------------------------------------- BigQuery

const BIGQUERY_TYPES: Record<ColumnType, string> = {
  int32: 'INT64',
  int64: 'INT64',
  uint256: 'STRING',
  string: 'STRING',
  bool: 'BOOL',
  timestamp: 'TIMESTAMP',
  date: 'DATE',
  json: 'STRING',
};

function bigQueryDataset(o: DdlOptions): string {
  return o.schema ?? sqlName(o.jobName);
}

function bigQueryTable(o: DdlOptions, t: TableSpec, dir: string): string {
  const cols = dataColumns(t, o.layout).map((c) => `  \`${c.name}\` ${BIGQUERY_TYPES[c.type]}`);
  const lines = [`CREATE OR REPLACE EXTERNAL TABLE \`${bigQueryDataset(o)}.${t.name}\` (`, cols.join(',\n'), ')'];
  if (o.layout.partitions.length > 0) {
    lines.push(`WITH PARTITION COLUMNS (${o.layout.partitions.map((p) => `\`${p.name}\` ${BIGQUERY_TYPES[p.type]}`).join(', ')})`);
  }
  if (o.connection) lines.push(`WITH CONNECTION \`${o.connection}\``);
  const options = [`format = ${o.format === 'parquet' ? "'PARQUET'" : "'NEWLINE_DELIMITED_JSON'"}`, `uris = [${sqlString(`${dir}/*`)}]`];
  if (o.format === 'ndjson' && o.compression === 'gzip') options.push("compression = 'GZIP'");
  if (o.layout.partitions.length > 0)
    options.push(`hive_partition_uri_prefix = ${sqlString(dir)}`, 'require_hive_partition_filter = false');
  lines.push(`OPTIONS (\n  ${options.join(',\n  ')}\n)`);
  return `${lines.join('\n')};`;
}

// ---------------------------------------------------------------- Snowflake

const SNOWFLAKE_TYPES: Record<ColumnType, string> = {
  int32: 'NUMBER(10,0)',
  int64: 'NUMBER(19,0)',
  uint256: 'VARCHAR',
  string: 'VARCHAR',
  bool: 'BOOLEAN',
  timestamp: 'TIMESTAMP_TZ',
  date: 'DATE',
  json: 'VARCHAR',
};

/** Unquoted names fold to upper case; these would clash with keywords or the VALUE column. */
const SNOWFLAKE_QUOTED = new Set([
  'value',
  'values',
  'date',
  'from',
  'to',
  'order',
  'group',
  'select',
  'table',
  'row',
  'rows',
  'start',
  'set',
  'sample',
  'column',
]);

function snowflakeName(name: string): string {
  return SNOWFLAKE_QUOTED.has(name) || !/^[a-z_][a-z0-9_]*$/.test(name) ? `"${name.replaceAll('"', '""')}"` : name;
}

function snowflakeTable(o: DdlOptions, t: TableSpec, stage: string): string {
  const fromPath = (p: PartitionColumn) => `SPLIT_PART(SPLIT_PART(METADATA$FILENAME, ${sqlString(`/${p.name}=`)}, 2), '/', 1)`;
  const partitionCols = o.layout.partitions.map((p) => {
    const expr =
      p.type === 'date' ? `TO_DATE(${fromPath(p)}, 'YYYY-MM-DD')` : p.type === 'int64' ? `TO_NUMBER(${fromPath(p)})` : fromPath(p);
    return `  ${snowflakeName(p.name)} ${SNOWFLAKE_TYPES[p.type]} AS (${expr})`;
  });
  const dataCols = dataColumns(t, o.layout).map(
    (c) => `  ${snowflakeName(c.name)} ${SNOWFLAKE_TYPES[c.type]} AS (VALUE:"${c.name}"::${SNOWFLAKE_TYPES[c.type]})`,
  );
  const lines = [
    `CREATE OR REPLACE EXTERNAL TABLE ${qualified(o.schema, t.name, snowflakeName)} (`,
    [...partitionCols, ...dataCols].join(',\n'),
    ')',
  ];
  if (o.layout.partitions.length > 0) lines.push(`PARTITION BY (${o.layout.partitions.map((p) => snowflakeName(p.name)).join(', ')})`);
  lines.push(`LOCATION = @${stage}/${o.layout.tableDir(t.name)}/`);
  lines.push(
    o.format === 'parquet'
      ? 'FILE_FORMAT = (TYPE = PARQUET)'
      : `FILE_FORMAT = (TYPE = JSON, COMPRESSION = ${o.compression === 'gzip' ? 'GZIP' : 'NONE'})`,
  );
  lines.push(
    `PATTERN = ${sqlString(`.*${o.format === 'parquet' ? '[.]parquet' : o.compression === 'gzip' ? '[.]ndjson[.]gz' : '[.]ndjson'}`)}`,
  );
  lines.push('AUTO_REFRESH = FALSE;');
  lines.push(
    `-- New files: ALTER EXTERNAL TABLE ${qualified(o.schema, t.name, snowflakeName)} REFRESH; (or AUTO_REFRESH with S3 event notifications)`,
  );
  return lines.join('\n');
}

/** First date of a time range, for Athena's date projection. */
export function firstDateOf(range: { by: string; from: number } | null): string | undefined {
  return range && range.by === 'time' ? isoDate(range.from) : undefined;
}
