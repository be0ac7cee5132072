import type { CommandModule } from 'yargs';
import { UserInputError } from '../errors.js';
import { DIALECTS, exportLayout, firstDateOf, generateDdl, type Dialect } from '../warehouse/ddl.js';
import { jobTables } from '../run/tables.js';
import type { ResolvedConfig } from '../config/index.js';
import { loadJobContext, withConfigFlags, type ConfigArgs } from './options.js';
import { CATALOG_ONLY_DIALECTS, catalogDdl, type CatalogReadOptions } from '../warehouse/catalog-ddl.js';

interface DdlArgs extends ConfigArgs {
  job: string;
  dialect: Dialect | (typeof CATALOG_ONLY_DIALECTS)[number];
  location?: string | undefined;
  schema?: string | undefined;
  connection?: string | undefined;
  stage?: string | undefined;
  'storage-integration'?: string | undefined;
}

/** Prints CREATE statements for the job's tables in a warehouse's dialect (reads nothing remote but an Iceberg table's current version). */
export const ddlCommand: CommandModule<object, DdlArgs> = {
  command: 'ddl <job>',
  describe: 'Print CREATE statements (external tables over the Hive-partitioned output) for Athena, DuckDB, BigQuery or Snowflake',
  builder: (y) =>
    withConfigFlags(y)
      .positional('job', { type: 'string', demandOption: true, describe: 'Job file (YAML or JSON)' })
      .option('dialect', {
        type: 'string',
        choices: [...DIALECTS, ...CATALOG_ONLY_DIALECTS],
        demandOption: true,
        describe: 'Warehouse SQL dialect (spark, trino: an Iceberg job with output.catalog.uri)',
      })
      .option('location', {
        type: 'string',
        describe: 'Root of the export as the warehouse reads it (default: the destination), e.g. gs://bucket/prefix',
      })
      .option('schema', { type: 'string', describe: 'Database/schema (BigQuery: dataset) to create the tables in' })
      .option('connection', { type: 'string', describe: 'BigQuery: connection of a BigQuery Omni (S3) external table' })
      .option('stage', { type: 'string', describe: 'Snowflake: an existing stage over the export root (default: one is created)' })
      .option('storage-integration', {
        type: 'string',
        describe: 'Snowflake: storage integration of the stage created (default insight_export_s3)',
      })
      .example('$0 ddl jobs/demo.yaml --dialect duckdb | duckdb demo.db', 'Query the demo export with DuckDB')
      .example('$0 ddl jobs/s3-export.yaml --dialect athena --schema insight', 'Athena tables with partition projection') as never,
  handler: async (args) => {
    const { job, config } = await loadJobContext(args.job, args, []);
    if (config.output.format === 'iceberg' && config.output.catalogUri !== null) {
      const tables = await jobTables(job);
      process.stdout.write(catalogDdl(catalogReadOptions(config, args.dialect, job.name, tables)));
      return;
    }
    const dialect = args.dialect;
    if (dialect === 'spark' || dialect === 'trino') {
      throw new UserInputError(`${dialect} reads Iceberg tables through a catalog: this job has none`, {
        hint: 'Set output.format: iceberg and output.catalog.uri (docs/catalogs.md), or use --dialect duckdb, athena, bigquery or snowflake.',
      });
    }
    const location = args.location ?? config.output.destination?.url;
    if (!location) {
      throw new UserInputError('No location for the tables: the job has no destination', {
        hint: 'Set output.destination (or --destination), or give the root the warehouse reads with --location.',
      });
    }
    if (dialect !== 'duckdb' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
      throw new UserInputError(`${dialect} reads object storage, not the local directory ${location}`, {
        hint: 'Export to s3://bucket/prefix (or copy the output there) and pass --location with that URI.',
      });
    }
    const tables = await jobTables(job);
    const metadataFiles = config.output.format === 'iceberg' ? await currentMetadataFiles(config, tables) : undefined;
    const ddl = generateDdl({
      dialect,
      tables,
      layout: exportLayout(config.output.partitioning, job.name),
      location,
      format: config.output.format,
      compression: config.output.compression,
      schema: args.schema,
      chains: [...new Set(job.targets.flatMap((t) => t.chains))].sort((a, b) => a - b),
      firstDate: firstDateOf(job.range),
      connection: args.connection,
      stage: args.stage,
      storageIntegration: args['storage-integration'],
      s3Endpoint: config.s3.endpoint,
      s3Region: config.s3.region,
      jobName: job.name,
      metadataFiles,
    });
    process.stdout.write(ddl);
  },
};

/** An Iceberg destination's tables and their current metadata files (the one thing `ddl` reads from the destination). */
async function currentMetadataFiles(config: ResolvedConfig, tables: { name: string }[]): Promise<Map<string, string>> {
  const destination = config.output.destination;
  const out = new Map<string, string>();
  if (!destination) return out;
  // Loaded only for an Iceberg destination (Avro, the store).
  const [{ readCurrentVersion }, { openStore }] = await Promise.all([import('../iceberg/index.js'), import('../store/open-store.js')]);
  const store = await openStore(destination, { s3: config.s3 });
  try {
    for (const t of tables) {
      const current = await readCurrentVersion(store, t.name);
      if (current) out.set(t.name, current.key);
    }
  } finally {
    await store.close?.();
  }
  return out;
}

/** What the catalog statements name, from the resolved settings (never a secret). */
function catalogReadOptions(
  config: ResolvedConfig,
  dialect: CatalogReadOptions['dialect'],
  jobName: string,
  tables: { name: string }[],
): CatalogReadOptions {
  const c = config.output;
  return {
    dialect,
    tables,
    jobName,
    uri: c.catalogUri!,
    warehouse: c.catalogWarehouse,
    namespace: (c.catalogNamespace ?? jobName).split('.'),
    auth: c.catalogAuth,
    tokenEndpoint: c.catalogTokenEndpoint,
    scope: c.catalogScope,
    signingName: c.catalogSigningName,
    signingRegion: c.catalogSigningRegion ?? config.s3.region,
  };
}
