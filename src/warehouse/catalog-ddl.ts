/**
 * How each engine reads an Iceberg destination's tables THROUGH its REST catalog
 * (`output.catalog.uri` set): the engine attaches the catalog and always reads the table's current
 * snapshot, so nothing is re-pointed after a run. Secrets are never printed: the statements name
 * the environment variable a value comes from. Each engine's syntax, with the page it is taken
 * from: docs/catalogs.md#reading-the-tables-through-the-catalog.
 */
import type { CatalogAuthKind } from '../settings/catalog-settings.js';

/** `ddl --dialect` values: the warehouses of files, and Spark and Trino, which read only through a catalog. */
export const CATALOG_ONLY_DIALECTS = ['spark', 'trino'] as const;

export interface CatalogReadOptions {
  dialect: 'athena' | 'duckdb' | 'bigquery' | 'snowflake' | (typeof CATALOG_ONLY_DIALECTS)[number];
  tables: { name: string }[];
  jobName: string;
  uri: string;
  warehouse: string | null;
  /** The namespace's levels. */
  namespace: string[];
  auth: CatalogAuthKind;
  tokenEndpoint: string | null;
  scope: string | null;
  signingName: string;
  signingRegion: string | null;
}

const CLIENT_ID = '<client id: $INSIGHT_EXPORT_CATALOG_CLIENT_ID>';
const CLIENT_SECRET = '<client secret: $INSIGHT_EXPORT_CATALOG_CLIENT_SECRET>';
const TOKEN = '<token: $INSIGHT_EXPORT_CATALOG_TOKEN>';

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

function sqlName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
}

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function tokenEndpoint(o: CatalogReadOptions): string {
  return o.tokenEndpoint ?? `${o.uri}/v1/oauth/tokens`;
}

/** An AWS endpoint the engines know by kind: Glue's or S3 Tables' Iceberg REST endpoint. */
function awsEndpoint(o: CatalogReadOptions): 'glue' | 's3tables' | null {
  const host = new URL(o.uri).host;
  if (/^glue\.[a-z0-9-]+\.amazonaws\.com$/.test(host)) return 'glue';
  if (/^s3tables\.[a-z0-9-]+\.amazonaws\.com$/.test(host)) return 's3tables';
  return null;
}

/** The statements, separated by blank lines. */
export function catalogDdl(o: CatalogReadOptions): string {
  const header = [
    `-- insight-export: ${o.dialect} reads the tables of job ${o.jobName} through the Iceberg REST catalog ${o.uri}` +
      ` (warehouse ${o.warehouse ?? '(none)'}, namespace ${o.namespace.join('.')}): every run's snapshot is current at once, nothing to re-point.`,
    '-- uint256 columns are exact decimal strings: DECIMAL(38,0) would lose values over 38 digits (uint256 has up to 78).',
  ];
  const body = {
    duckdb: duckdb,
    snowflake: snowflake,
    athena: athena,
    bigquery: bigquery,
    spark: spark,
    trino: trino,
  }[o.dialect](o);
  return `${[...header, ...body].join('\n\n')}\n`;
}

// ---------------------------------------------------------------- DuckDB

function duckdb(o: CatalogReadOptions): string[] {
  const alias = `${sqlName(o.jobName)}_catalog`;
  const parts = ['INSTALL iceberg;\nLOAD iceberg;\nINSTALL httpfs;\nLOAD httpfs;'];
  const attach = [`TYPE iceberg`];
  const aws = awsEndpoint(o);
  if (o.auth === 'sigv4' && aws) {
    parts.push(
      `-- AWS credentials from the default chain (environment, profile, instance role).\nCREATE SECRET (TYPE s3, PROVIDER credential_chain);`,
    );
    attach.push(`ENDPOINT_TYPE ${aws === 'glue' ? 'glue' : 's3_tables'}`);
  } else {
    attach.push(`ENDPOINT ${sqlString(o.uri)}`);
    if (o.auth === 'oauth2' || o.auth === 'bearer') {
      const secret = `${alias}_secret`;
      const fields =
        o.auth === 'bearer'
          ? [`TOKEN ${sqlString(TOKEN)}`]
          : [
              `CLIENT_ID ${sqlString(CLIENT_ID)}`,
              `CLIENT_SECRET ${sqlString(CLIENT_SECRET)}`,
              `OAUTH2_SERVER_URI ${sqlString(tokenEndpoint(o))}`,
              ...(o.scope ? [`OAUTH2_SCOPE ${sqlString(o.scope)}`] : []),
            ];
      parts.push(`CREATE OR REPLACE SECRET ${secret} (\n  TYPE iceberg,\n  ${fields.join(',\n  ')}\n);`);
      attach.push(`SECRET ${secret}`);
    } else if (o.auth === 'sigv4') {
      parts.push(`CREATE SECRET (TYPE s3, PROVIDER credential_chain);`);
      attach.push(`AUTHORIZATION_TYPE 'sigv4'`);
    } else {
      attach.push(`AUTHORIZATION_TYPE 'none'`);
    }
  }
  parts.push(`ATTACH ${sqlString(o.warehouse ?? '')} AS ${alias} (\n  ${attach.join(',\n  ')}\n);`);
  const ns = quoted(o.namespace.join('.'));
  for (const t of o.tables) parts.push(`SELECT count(*) FROM ${alias}.${ns}.${quoted(t.name)};`);
  return parts;
}

// ---------------------------------------------------------------- Snowflake

function snowflakeAuth(o: CatalogReadOptions): string[] {
  switch (o.auth) {
    case 'oauth2':
      return [
        `  TYPE = OAUTH`,
        `  OAUTH_TOKEN_URI = ${sqlString(tokenEndpoint(o))}`,
        `  OAUTH_CLIENT_ID = ${sqlString(CLIENT_ID)}`,
        `  OAUTH_CLIENT_SECRET = ${sqlString(CLIENT_SECRET)}`,
        `  OAUTH_ALLOWED_SCOPES = (${sqlString(o.scope ?? 'PRINCIPAL_ROLE:ALL')})`,
      ];
    case 'bearer':
      return [`  TYPE = BEARER`, `  BEARER_TOKEN = ${sqlString(TOKEN)}`];
    case 'sigv4':
      return [
        `  TYPE = SIGV4`,
        `  SIGV4_IAM_ROLE = '<arn of an IAM role Snowflake assumes, allowed to read the catalog>'`,
        ...(o.signingRegion ? [`  SIGV4_SIGNING_REGION = ${sqlString(o.signingRegion)}`] : []),
      ];
    case 'none':
      return [`  TYPE = BEARER`, `  BEARER_TOKEN = '<the catalog takes no credentials; Snowflake asks for one: any value>'`];
  }
}

function snowflake(o: CatalogReadOptions): string[] {
  const integration = `${sqlName(o.jobName)}_rest_catalog`;
  const volume = `${sqlName(o.jobName)}_volume`;
  const namespace = o.namespace.join('.');
  const restConfig = [
    `  CATALOG_URI = ${sqlString(o.uri)}`,
    ...(awsEndpoint(o) === 'glue' ? ['  CATALOG_API_TYPE = AWS_GLUE'] : []),
    ...(o.warehouse ? [`  CATALOG_NAME = ${sqlString(o.warehouse)}`] : []),
  ];
  const parts = [
    [
      `-- A catalog integration of the REST catalog (by an account admin); the data files are read through an external`,
      `-- volume over the destination named ${volume} (CREATE EXTERNAL VOLUME).`,
      `CREATE CATALOG INTEGRATION IF NOT EXISTS ${integration}`,
      `  CATALOG_SOURCE = ICEBERG_REST`,
      `  TABLE_FORMAT = ICEBERG`,
      `  CATALOG_NAMESPACE = ${sqlString(namespace)}`,
      `  REST_CONFIG = (`,
      restConfig.map((l) => `  ${l}`).join('\n'),
      `  )`,
      `  REST_AUTHENTICATION = (`,
      snowflakeAuth(o)
        .map((l) => `  ${l}`)
        .join('\n'),
      `  )`,
      `  ENABLED = TRUE;`,
    ].join('\n'),
  ];
  for (const t of o.tables) {
    parts.push(
      [
        `CREATE ICEBERG TABLE IF NOT EXISTS ${t.name}`,
        `  EXTERNAL_VOLUME = ${sqlString(volume)}`,
        `  CATALOG = ${sqlString(integration)}`,
        `  CATALOG_NAMESPACE = ${sqlString(namespace)}`,
        `  CATALOG_TABLE_NAME = ${sqlString(t.name)}`,
        `  AUTO_REFRESH = TRUE;`,
      ].join('\n'),
    );
  }
  return parts;
}

// ---------------------------------------------------------------- Athena

function athena(o: CatalogReadOptions): string[] {
  const aws = awsEndpoint(o);
  const database = o.namespace.join('.');
  if (aws === 'glue') {
    return [
      `-- The catalog is the Glue Data Catalog of account ${o.warehouse ?? '(the signing account)'}: Athena sees each table as committed, in database ${database}.`,
      ...o.tables.map((t) => `SELECT count(*) FROM "${database}"."${t.name}";`),
    ];
  }
  if (aws === 's3tables') {
    const bucket = (o.warehouse ?? '').split(':bucket/')[1] ?? '<table bucket>';
    return [
      `-- The catalog is the S3 table bucket ${o.warehouse ?? ''}: once the table buckets are integrated with AWS analytics services\n` +
        `-- (the S3 console's "Enable integration"), Athena reads it as the Glue catalog s3tablescatalog/${bucket}.`,
      ...o.tables.map((t) => `SELECT count(*) FROM "s3tablescatalog/${bucket}"."${database}"."${t.name}";`),
    ];
  }
  return [
    [
      `-- Athena reads Iceberg tables from the AWS Glue Data Catalog only; ${o.uri} is another catalog.`,
      `-- Commit through Glue's Iceberg REST endpoint (output.catalog.uri https://glue.<region>.amazonaws.com/iceberg,`,
      `-- auth sigv4, warehouse = the account id) to query the tables in Athena, or register each table's current`,
      `-- metadata file in Glue as without a catalog (ddl --dialect athena with output.catalog.uri unset).`,
    ].join('\n'),
  ];
}

// ---------------------------------------------------------------- BigQuery

function bigquery(o: CatalogReadOptions): string[] {
  const host = new URL(o.uri).host;
  const namespace = o.namespace.join('.');
  if (host === 'biglake.googleapis.com') {
    // A single-bucket catalog is named by its bucket (gs://<bucket>); a multi-bucket one by bl://projects/<p>/catalogs/<c>.
    const bl = /^bl:\/\/projects\/([^/]+)\/catalogs\/([^/]+)/.exec(o.warehouse ?? '');
    const project = bl?.[1];
    const catalog = bl?.[2] ?? /^gs:\/\/([^/]+)/.exec(o.warehouse ?? '')?.[1] ?? '<catalog>';
    return [
      `-- The catalog is BigLake metastore (warehouse ${o.warehouse ?? '(none)'}): BigQuery queries its tables by\n` +
        `-- project.catalog.namespace.table, current as committed.`,
      ...o.tables.map((t) => `SELECT count(*) FROM \`${project ?? '<project>'}.${catalog}.${namespace}.${t.name}\`;`),
    ];
  }
  return [
    [
      `-- BigQuery reads Iceberg REST catalogs through BigLake metastore only; ${o.uri} is another catalog.`,
      `-- Commit through BigLake metastore's Iceberg REST catalog (output.catalog.uri https://biglake.googleapis.com/iceberg/v1/restcatalog,`,
      `-- auth oauth2 with a Google access token, warehouse gs://<bucket>) to query the tables in BigQuery, or create a BigLake`,
      `-- table over each table's current metadata file as without a catalog (ddl --dialect bigquery with output.catalog.uri unset).`,
    ].join('\n'),
  ];
}

// ---------------------------------------------------------------- Spark and Trino

function restProperties(o: CatalogReadOptions, prefix: string): [string, string][] {
  const props: [string, string][] = [
    [`${prefix}.type`, 'rest'],
    [`${prefix}.uri`, o.uri],
  ];
  if (o.warehouse) props.push([`${prefix}.warehouse`, o.warehouse]);
  if (o.auth === 'sigv4') {
    props.push([`${prefix}.rest.sigv4-enabled`, 'true'], [`${prefix}.rest.signing-name`, o.signingName]);
    if (o.signingRegion) props.push([`${prefix}.rest.signing-region`, o.signingRegion]);
  } else if (o.auth === 'oauth2') {
    props.push([`${prefix}.credential`, `${CLIENT_ID}:${CLIENT_SECRET}`], [`${prefix}.oauth2-server-uri`, tokenEndpoint(o)]);
    if (o.scope) props.push([`${prefix}.scope`, o.scope]);
  } else if (o.auth === 'bearer') {
    props.push([`${prefix}.token`, TOKEN]);
  }
  return props;
}

function spark(o: CatalogReadOptions): string[] {
  const name = `${sqlName(o.jobName)}_catalog`;
  const prefix = `spark.sql.catalog.${name}`;
  const props: [string, string][] = [
    [prefix, 'org.apache.iceberg.spark.SparkCatalog'],
    ...restProperties(o, prefix),
    ['spark.sql.extensions', 'org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions'],
  ];
  return [
    `-- spark-defaults.conf (or --conf on spark-sql / spark-submit), with the iceberg-spark-runtime jar${o.auth === 'sigv4' ? ' and iceberg-aws-bundle' : ''}:`,
    props.map(([k, v]) => `-- ${k} ${v}`).join('\n'),
    ...o.tables.map((t) => `SELECT count(*) FROM ${name}.${o.namespace.map((n) => `\`${n}\``).join('.')}.\`${t.name}\`;`),
  ];
}

function trino(o: CatalogReadOptions): string[] {
  const name = `${sqlName(o.jobName)}_catalog`;
  const props: [string, string][] = [
    ['connector.name', 'iceberg'],
    ['iceberg.catalog.type', 'rest'],
    ['iceberg.rest-catalog.uri', o.uri],
  ];
  if (o.warehouse) props.push(['iceberg.rest-catalog.warehouse', o.warehouse]);
  if (o.auth === 'sigv4') {
    props.push(['iceberg.rest-catalog.security', 'SIGV4'], ['iceberg.rest-catalog.signing-name', o.signingName]);
    if (o.signingRegion) props.push(['s3.region', o.signingRegion]);
  } else if (o.auth === 'oauth2') {
    props.push(
      ['iceberg.rest-catalog.security', 'OAUTH2'],
      ['iceberg.rest-catalog.oauth2.credential', `${CLIENT_ID}:${CLIENT_SECRET}`],
      ['iceberg.rest-catalog.oauth2.server-uri', tokenEndpoint(o)],
    );
    if (o.scope) props.push(['iceberg.rest-catalog.oauth2.scope', o.scope]);
  } else if (o.auth === 'bearer') {
    props.push(['iceberg.rest-catalog.security', 'OAUTH2'], ['iceberg.rest-catalog.oauth2.token', TOKEN]);
  } else {
    props.push(['iceberg.rest-catalog.security', 'NONE']);
  }
  return [
    `-- etc/catalog/${name}.properties (with the file system of the destination, e.g. fs.native-s3.enabled=true):`,
    props.map(([k, v]) => `-- ${k}=${v}`).join('\n'),
    ...o.tables.map((t) => `SELECT count(*) FROM ${name}."${o.namespace.join('.')}"."${t.name}";`),
  ];
}
