import type { Argv } from 'yargs';
import { SandboxOptionsError } from '../errors.js';
import type { CatalogOptions, CommitFaultStatus } from './catalog-options.js';

/** The flags of the Iceberg REST catalog at /iceberg (catalog-options.ts); its secrets come from the environment only. */
export interface CatalogArgs {
  'catalog-warehouse'?: string | undefined;
  'catalog-prefix'?: string | undefined;
  'catalog-prefix-in'?: 'overrides' | 'defaults' | undefined;
  'catalog-latency-ms'?: number | undefined;
  'catalog-commit-faults'?: string | undefined;
  'catalog-drop-commit-answers'?: number | undefined;
  'catalog-expire-tokens'?: number | undefined;
  'catalog-token-lifetime'?: number | undefined;
}

/** Adds the catalog's flags to the sandbox command. */
export function catalogFlags<T>(y: Argv<T>): Argv<T> {
  return y
    .option('catalog-warehouse', {
      type: 'string',
      describe:
        'Folder of the catalog at /iceberg, or s3://bucket/prefix (metadata files on S3, with the S3 settings of the environment: S3_ENDPOINT, AWS_REGION, the AWS credential chain); default: a temporary folder removed on exit',
    })
    .option('catalog-prefix', {
      type: 'string',
      describe: 'A prefix the catalog requires in its paths, announced by GET /iceberg/v1/config',
    })
    .option('catalog-prefix-in', {
      choices: ['overrides', 'defaults'] as const,
      describe: 'Where /v1/config announces the prefix (default overrides)',
    })
    .option('catalog-latency-ms', { type: 'number', describe: 'Delay of every catalog answer' })
    .option('catalog-commit-faults', {
      type: 'string',
      describe: 'The next commits are applied, then answered with these statuses, e.g. 502,500,504 (state unknown)',
    })
    .option('catalog-drop-commit-answers', {
      type: 'number',
      describe: 'The next this many commits are applied, then their connection is closed with no answer',
    })
    .option('catalog-expire-tokens', { type: 'number', describe: 'The next this many authorised catalog requests get 401 (token expired)' })
    .option('catalog-token-lifetime', {
      type: 'number',
      describe: 'Lifetime in seconds of the tokens /iceberg/v1/oauth/tokens issues (default 3600)',
    })
    .group(
      [
        'catalog-warehouse',
        'catalog-prefix',
        'catalog-prefix-in',
        'catalog-latency-ms',
        'catalog-commit-faults',
        'catalog-drop-commit-answers',
        'catalog-expire-tokens',
        'catalog-token-lifetime',
      ],
      'The Iceberg REST catalog at /iceberg (auth: INSIGHT_SANDBOX_CATALOG_TOKEN, INSIGHT_SANDBOX_CATALOG_CLIENT_ID and _CLIENT_SECRET):',
    );
}

function commitFaults(text: string | undefined): CommitFaultStatus[] | undefined {
  if (text === undefined) return undefined;
  return text.split(',').map((s) => {
    const status = Number(s.trim());
    if (status !== 500 && status !== 502 && status !== 504) {
      throw new SandboxOptionsError(`--catalog-commit-faults: ${JSON.stringify(s)} is not 500, 502 or 504`, {
        hint: 'e.g. --catalog-commit-faults 502,500',
      });
    }
    return status;
  });
}

/** The catalog's options from its flags and the environment (token, client id and secret). */
export function catalogOptionsFromArgs(args: CatalogArgs, env: NodeJS.ProcessEnv): CatalogOptions {
  const token = env.INSIGHT_SANDBOX_CATALOG_TOKEN || undefined;
  const clientId = env.INSIGHT_SANDBOX_CATALOG_CLIENT_ID || undefined;
  const clientSecret = env.INSIGHT_SANDBOX_CATALOG_CLIENT_SECRET || undefined;
  const lifetime = args['catalog-token-lifetime'];
  const given = { token, clientId, clientSecret, tokenLifetimeSeconds: lifetime };
  const auth = token || clientId ? defined(given) : undefined;
  const opts: CatalogOptions = {
    warehouse: args['catalog-warehouse'],
    prefix: args['catalog-prefix'],
    prefixIn: args['catalog-prefix-in'],
    latencyMs: args['catalog-latency-ms'],
    commitFaults: commitFaults(args['catalog-commit-faults']),
    dropCommitAnswers: args['catalog-drop-commit-answers'],
    expireTokens: args['catalog-expire-tokens'],
    auth,
  };
  return defined(opts);
}

/** The object without its undefined fields (unset flags leave the defaults). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
