/**
 * Issue 44 item 3: with output.catalog.uri set, `ddl` prints for each engine how to read the tables
 * THROUGH the catalog (DuckDB ATTACH, a Snowflake catalog integration with CATALOG_TABLE_NAME and
 * AUTO_REFRESH, Athena over Glue, BigQuery over BigLake metastore, Spark and Trino catalog
 * properties), never a metadata file, and never a secret. In-process CLI, no network: the
 * statements name the catalog, so `ddl` reads nothing. DuckDB's iceberg extension cannot be
 * installed offline here (INSTALL iceberg downloads it), so the statements are checked as text.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('ops-ddl-catalog-');
const SECRET = 'do-not-print-me-7f3a';

async function jobWith(name: string, catalog: Record<string, string>): Promise<string> {
  const file = join(tmp.dir, `${name}.yaml`);
  const lines = Object.entries(catalog).map(([k, v]) => `    ${k}: "${v}"`);
  await writeFile(
    file,
    [
      `name: ${name}`,
      'source: { base_url: sandbox, chains: [1] }',
      'targets:',
      '  - wallet: alice.eth',
      '    datasets: [transactions]',
      '  - contract: "0x77f5e148a71be22cf4f3a1816626b240547b6302"',
      '    events: ["Transfer(address indexed from, address indexed to, uint256 value)"]',
      'range: { from: "2024-02-01", to: "2024-02-02", chunk: 1d }',
      'output:',
      '  format: iceberg',
      '  destination: s3://lake/insight',
      '  catalog:',
      ...lines,
      '',
    ].join('\n'),
  );
  return file;
}

async function ddl(file: string, dialect: string): Promise<string> {
  const env = { ...process.env };
  process.env.INSIGHT_EXPORT_CATALOG_CLIENT_ID = SECRET;
  process.env.INSIGHT_EXPORT_CATALOG_CLIENT_SECRET = SECRET;
  process.env.INSIGHT_EXPORT_CATALOG_TOKEN = SECRET;
  try {
    const r = await runCli(['ddl', file, '--dialect', dialect]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(SECRET);
    expect(r.stdout).not.toContain('metadata.json');
    return r.stdout;
  } finally {
    process.env = env;
  }
}

const TABLES = ['transactions', 'events_transfer_ddf252ad_8174ae'];

describe('ddl of a job committed through a REST catalog', () => {
  it('Polaris / Open Catalog (oauth2): DuckDB attaches it, Snowflake integrates it, Spark and Trino name it', async () => {
    const file = await jobWith('wallet_history', {
      uri: 'https://polaris.example.com/api/catalog',
      warehouse: 'lake_catalog',
      namespace: 'insight.raw',
      auth: 'oauth2',
      scope: 'PRINCIPAL_ROLE:ALL',
    });
    const duck = await ddl(file, 'duckdb');
    expect(duck).toContain('LOAD iceberg;');
    expect(duck).toMatch(
      /CREATE OR REPLACE SECRET wallet_history_catalog_secret \(\n {2}TYPE iceberg,\n {2}CLIENT_ID '<client id: \$INSIGHT_EXPORT_CATALOG_CLIENT_ID>'/,
    );
    expect(duck).toContain("OAUTH2_SERVER_URI 'https://polaris.example.com/api/catalog/v1/oauth/tokens'");
    expect(duck).toContain("OAUTH2_SCOPE 'PRINCIPAL_ROLE:ALL'");
    expect(duck).toMatch(
      /ATTACH 'lake_catalog' AS wallet_history_catalog \(\n {2}TYPE iceberg,\n {2}ENDPOINT 'https:\/\/polaris\.example\.com\/api\/catalog',\n {2}SECRET wallet_history_catalog_secret\n\);/,
    );
    for (const t of TABLES) expect(duck).toContain(`SELECT count(*) FROM wallet_history_catalog."insight.raw"."${t}";`);

    const snow = await ddl(file, 'snowflake');
    expect(snow).toMatch(
      /CREATE CATALOG INTEGRATION IF NOT EXISTS wallet_history_rest_catalog\n {2}CATALOG_SOURCE = ICEBERG_REST\n {2}TABLE_FORMAT = ICEBERG/,
    );
    expect(snow).toContain("CATALOG_URI = 'https://polaris.example.com/api/catalog'");
    expect(snow).toContain("CATALOG_NAME = 'lake_catalog'");
    expect(snow).toContain('TYPE = OAUTH');
    expect(snow).toContain("OAUTH_ALLOWED_SCOPES = ('PRINCIPAL_ROLE:ALL')");
    for (const t of TABLES) {
      expect(snow).toContain(
        `CREATE ICEBERG TABLE IF NOT EXISTS ${t}\n  EXTERNAL_VOLUME = 'wallet_history_volume'\n  CATALOG = 'wallet_history_rest_catalog'\n  CATALOG_NAMESPACE = 'insight.raw'\n  CATALOG_TABLE_NAME = '${t}'\n  AUTO_REFRESH = TRUE;`,
      );
    }

    const spark = await ddl(file, 'spark');
    expect(spark).toContain('spark.sql.catalog.wallet_history_catalog org.apache.iceberg.spark.SparkCatalog');
    expect(spark).toContain('spark.sql.catalog.wallet_history_catalog.type rest');
    expect(spark).toContain('spark.sql.catalog.wallet_history_catalog.uri https://polaris.example.com/api/catalog');
    expect(spark).toContain('spark.sql.catalog.wallet_history_catalog.warehouse lake_catalog');
    expect(spark).toContain('spark.sql.catalog.wallet_history_catalog.scope PRINCIPAL_ROLE:ALL');
    for (const t of TABLES) expect(spark).toContain(`FROM wallet_history_catalog.\`insight\`.\`raw\`.\`${t}\`;`);

    const trino = await ddl(file, 'trino');
    expect(trino).toContain('connector.name=iceberg');
    expect(trino).toContain('iceberg.catalog.type=rest');
    expect(trino).toContain('iceberg.rest-catalog.uri=https://polaris.example.com/api/catalog');
    expect(trino).toContain('iceberg.rest-catalog.warehouse=lake_catalog');
    expect(trino).toContain('iceberg.rest-catalog.security=OAUTH2');
    expect(trino).toContain('iceberg.rest-catalog.oauth2.scope=PRINCIPAL_ROLE:ALL');
    for (const t of TABLES) expect(trino).toContain(`FROM wallet_history_catalog."insight.raw"."${t}";`);

    // Athena and BigQuery cannot read this catalog: they say what is needed, and query nothing.
    expect(await ddl(file, 'athena')).toMatch(/Athena reads Iceberg tables from the AWS Glue Data Catalog only/);
    expect(await ddl(file, 'bigquery')).toMatch(/BigQuery reads Iceberg REST catalogs through BigLake metastore only/);
  });

  it("Glue's endpoint (sigv4): Athena selects from the Glue database, DuckDB attaches by account id", async () => {
    const file = await jobWith('glue_job', {
      uri: 'https://glue.us-east-1.amazonaws.com/iceberg',
      warehouse: '123456789012',
      auth: 'sigv4',
      signing_region: 'us-east-1',
    });
    const athena = await ddl(file, 'athena');
    for (const t of TABLES) expect(athena).toContain(`SELECT count(*) FROM "glue_job"."${t}";`);
    const duck = await ddl(file, 'duckdb');
    expect(duck).toContain("ATTACH '123456789012' AS glue_job_catalog (\n  TYPE iceberg,\n  ENDPOINT_TYPE glue\n);");
    const snow = await ddl(file, 'snowflake');
    expect(snow).toContain('CATALOG_API_TYPE = AWS_GLUE');
    expect(snow).toContain('TYPE = SIGV4');
    expect(snow).toContain("SIGV4_SIGNING_REGION = 'us-east-1'");
    const spark = await ddl(file, 'spark');
    expect(spark).toContain('spark.sql.catalog.glue_job_catalog.rest.sigv4-enabled true');
    expect(spark).toContain('spark.sql.catalog.glue_job_catalog.rest.signing-name glue');
    expect(spark).toContain('spark.sql.catalog.glue_job_catalog.rest.signing-region us-east-1');
    expect(await ddl(file, 'trino')).toContain('iceberg.rest-catalog.signing-name=glue');
  });

  it('S3 Tables: Athena reads the s3tablescatalog of the bucket; DuckDB attaches the ARN', async () => {
    const arn = 'arn:aws:s3tables:us-east-1:123456789012:bucket/chain-lake';
    const file = await jobWith('tables_job', {
      uri: 'https://s3tables.us-east-1.amazonaws.com/iceberg',
      warehouse: arn,
      auth: 'sigv4',
      signing_name: 's3tables',
      signing_region: 'us-east-1',
    });
    for (const t of TABLES) expect(await ddl(file, 'athena')).toContain(`FROM "s3tablescatalog/chain-lake"."tables_job"."${t}";`);
    expect(await ddl(file, 'duckdb')).toContain(`ATTACH '${arn}' AS tables_job_catalog (\n  TYPE iceberg,\n  ENDPOINT_TYPE s3_tables\n);`);
    expect(await ddl(file, 'spark')).toContain('rest.signing-name s3tables');
  });

  it('R2 (bearer) and BigLake metastore: the token by name, BigQuery by project.catalog.namespace.table', async () => {
    const r2 = await jobWith('r2_job', {
      uri: 'https://catalog.cloudflarestorage.com/acct/bucket',
      warehouse: 'acct_bucket',
      auth: 'bearer',
    });
    const duck = await ddl(r2, 'duckdb');
    expect(duck).toContain("TOKEN '<token: $INSIGHT_EXPORT_CATALOG_TOKEN>'");
    expect(duck).toContain("ENDPOINT 'https://catalog.cloudflarestorage.com/acct/bucket'");
    expect(await ddl(r2, 'snowflake')).toContain('TYPE = BEARER');
    const biglake = await jobWith('bl_job', {
      uri: 'https://biglake.googleapis.com/iceberg/v1/restcatalog',
      warehouse: 'gs://chain-lake',
      auth: 'bearer',
    });
    for (const t of TABLES) expect(await ddl(biglake, 'bigquery')).toContain(`FROM \`<project>.chain-lake.bl_job.${t}\`;`);
    const multi = await jobWith('bl_multi', {
      uri: 'https://biglake.googleapis.com/iceberg/v1/restcatalog',
      warehouse: 'bl://projects/my-proj/catalogs/lake',
      auth: 'bearer',
    });
    expect(await ddl(multi, 'bigquery')).toContain('FROM `my-proj.lake.bl_multi.transactions`;');
  });

  it('spark and trino without a catalog are refused, exit 2', async () => {
    const file = join(tmp.dir, 'files.yaml');
    await writeFile(
      file,
      'name: files\nsource: { base_url: sandbox, chains: [1] }\ntargets:\n  - wallet: alice.eth\n    datasets: [transactions]\nrange: { from: "2024-02-01", to: "2024-02-02", chunk: 1d }\noutput: { format: parquet, destination: s3://lake/x }\n',
    );
    const r = await runCli(['ddl', file, '--dialect', 'trino']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/trino reads Iceberg tables through a catalog/);
  });
});
