/**
 * The statements that register or read an Iceberg destination's tables (`output.format: iceberg`):
 * each engine opens a table by its metadata file, so the statements name the current one (read
 * from the destination by the `ddl` command) and say how to follow later snapshots.
 */
import type { DdlOptions, TableSpec } from './ddl.js';

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

function sqlName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
}

/** `metadata/v<N>.metadata.json` of the table, relative to the root; a placeholder when no run committed it yet. */
function metadataFile(o: DdlOptions, t: TableSpec): { key: string; committed: boolean } {
  const key = o.metadataFiles?.get(t.name);
  return key ? { key, committed: true } : { key: `${t.name}/metadata/v1.metadata.json`, committed: false };
}

function notCommitted(t: TableSpec, committed: boolean): string[] {
  return committed ? [] : [`-- ${t.name}: no snapshot yet (run the job first); v1 is the first run's metadata file.`];
}

/** Statements per dialect; `duckdbPreamble` is the S3 access and schema lines of the Parquet views. */
export function icebergDdl(o: DdlOptions, root: string, duckdbPreamble: string[]): string[] {
  switch (o.dialect) {
    case 'duckdb':
      return duckdbViews(o, root, duckdbPreamble);
    case 'snowflake':
      return snowflakeTables(o, root);
    case 'athena':
      return athenaGlueEntries(o, root);
    case 'bigquery':
      return bigqueryTables(o, root);
  }
  return [];
}

/** DuckDB: a view per table over iceberg_scan of its metadata file. */
function duckdbViews(o: DdlOptions, root: string, duckdbPreamble: string[]): string[] {
  const parts: string[] = [];
  parts.push('INSTALL iceberg;\nLOAD iceberg;', ...duckdbPreamble);
  for (const t of o.tables) {
    const { key, committed } = metadataFile(o, t);
    const name = `"${(o.schema ? `${o.schema}"."` : '') + t.name.replaceAll('"', '""')}"`;
    parts.push(
      [
        ...notCommitted(t, committed),
        `-- ${t.name}: the snapshot of ${key}; iceberg_scan(${sqlString(`${root}/${t.name}`)}) reads the newest (metadata/version-hint.text).`,
        `CREATE OR REPLACE VIEW ${name} AS`,
        `SELECT * FROM iceberg_scan(${sqlString(`${root}/${key}`)});`,
      ].join('\n'),
    );
  }
  return parts;
}

/** Snowflake: a catalog integration of metadata files, an Iceberg table per table, refreshed after each run. */
function snowflakeTables(o: DdlOptions, root: string): string[] {
  const parts: string[] = [];
  const volume = `${sqlName(o.jobName)}_volume`;
  const catalog = `${sqlName(o.jobName)}_iceberg`;
  if (o.schema) parts.push(`CREATE SCHEMA IF NOT EXISTS ${o.schema};`);
  parts.push(
    [
      `-- An external volume over ${root}/ named ${volume} (CREATE EXTERNAL VOLUME, by an account admin), and a catalog of metadata files:`,
      `CREATE CATALOG INTEGRATION IF NOT EXISTS ${catalog}`,
      `  CATALOG_SOURCE = OBJECT_STORE`,
      `  TABLE_FORMAT = ICEBERG`,
      `  ENABLED = TRUE;`,
    ].join('\n'),
  );
  for (const t of o.tables) {
    const { key, committed } = metadataFile(o, t);
    const name = o.schema ? `${o.schema}.${t.name}` : t.name;
    parts.push(
      [
        ...notCommitted(t, committed),
        `CREATE ICEBERG TABLE IF NOT EXISTS ${name}`,
        `  EXTERNAL_VOLUME = ${sqlString(volume)}`,
        `  CATALOG = ${sqlString(catalog)}`,
        `  METADATA_FILE_PATH = ${sqlString(key)};`,
        `-- After each run, the run report's metadata file (iceberg_commits[].metadata_key):`,
        `ALTER ICEBERG TABLE ${name} REFRESH ${sqlString(key)};`,
      ].join('\n'),
    );
  }
  return parts;
}

/** Athena: a Glue entry per table naming its metadata file, registered and updated with the AWS CLI. */
function athenaGlueEntries(o: DdlOptions, root: string): string[] {
  const parts: string[] = [];
  const database = o.schema ?? sqlName(o.jobName);
  for (const t of o.tables) {
    const { key, committed } = metadataFile(o, t);
    const input = {
      Name: t.name,
      TableType: 'EXTERNAL_TABLE',
      Parameters: { table_type: 'ICEBERG', metadata_location: `${root}/${key}` },
      StorageDescriptor: { Location: `${root}/${t.name}` },
    };
    parts.push(
      [
        ...notCommitted(t, committed),
        `-- ${t.name}: Athena reads an Iceberg table through its Glue entry, whose metadata_location names the metadata file`,
        `-- (Athena's CREATE TABLE ... TBLPROPERTIES ('table_type'='ICEBERG') would make a new empty table). Register it, then after each run update metadata_location:`,
        `-- aws glue create-table --database-name ${database} --table-input '${JSON.stringify(input)}'`,
        `-- aws glue update-table --database-name ${database} --table-input '<the same, metadata_location = the run report's metadata file>'`,
        `SELECT count(*) FROM "${database}"."${t.name}";`,
      ].join('\n'),
    );
  }
  return parts;
}

/** BigQuery: a BigLake external table per table over its metadata file. */
function bigqueryTables(o: DdlOptions, root: string): string[] {
  const parts: string[] = [];
  const dataset = o.schema ?? sqlName(o.jobName);
  parts.push(`CREATE SCHEMA IF NOT EXISTS \`${dataset}\`;`);
  for (const t of o.tables) {
    const { key, committed } = metadataFile(o, t);
    parts.push(
      [
        ...notCommitted(t, committed),
        `-- ${t.name}: a BigLake table over the metadata file; after each run, run it again with the report's metadata file.`,
        `CREATE OR REPLACE EXTERNAL TABLE \`${dataset}.${t.name}\``,
        ...(o.connection ? [`WITH CONNECTION \`${o.connection}\``] : []),
        `OPTIONS (`,
        `  format = 'ICEBERG',`,
        `  uris = [${sqlString(`${root}/${key}`)}]`,
        `);`,
      ].join('\n'),
    );
  }
  return parts;
}
