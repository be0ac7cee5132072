/**
 * Settings of an Iceberg REST catalog (`output.catalog.*` in files): with a uri set, Iceberg
 * tables are created in and committed through the catalog instead of as metadata files only. Its
 * secrets (a bearer token, OAuth2 client credentials) come from the environment only; SigV4 takes
 * the AWS credential chain, as S3 does.
 */
import { z } from 'zod';
import { anyString, choiceSetting } from './parsers.js';
import { ALL, checked, type Setting } from './setting.js';
import { parseBaseUrl } from './values.js';

export const CATALOG_AUTH_KINDS = ['none', 'bearer', 'oauth2', 'sigv4'] as const;
export type CatalogAuthKind = (typeof CATALOG_AUTH_KINDS)[number];

const text = { parse: anyString, file: () => z.string().trim().min(1) };
const url = { parse: (v: unknown) => parseBaseUrl(v, false), file: () => checked(z.string(), (v) => parseBaseUrl(v, false)) };

export const CATALOG_SETTINGS = {
  'output.catalog_uri': {
    key: 'output.catalog_uri',
    fileKey: 'output.catalog.uri',
    flag: { name: 'catalog-uri', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_URI'],
    ...url,
    doc: 'output.format iceberg: the base URL of an Iceberg REST catalog (clients add /v1/...), e.g. "https://glue.us-east-1.amazonaws.com/iceberg"; runs then create the tables in it and commit every snapshot through it. Unset (default): tables as metadata files only.',
    places: ALL,
  },
  'output.catalog_warehouse': {
    key: 'output.catalog_warehouse',
    fileKey: 'output.catalog.warehouse',
    flag: { name: 'catalog-warehouse', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_WAREHOUSE'],
    ...text,
    doc: "The catalog's warehouse, sent to its /v1/config (an account id for Glue, a table bucket ARN for S3 Tables, a catalog name for Polaris).",
    places: ALL,
  },
  'output.catalog_namespace': {
    key: 'output.catalog_namespace',
    fileKey: 'output.catalog.namespace',
    flag: { name: 'catalog-namespace', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_NAMESPACE'],
    ...text,
    doc: 'The catalog namespace of the job\'s tables, levels joined by "." (created when missing). Default: the job\'s name.',
    places: ALL,
  },
  'output.catalog_auth': {
    key: 'output.catalog_auth',
    fileKey: 'output.catalog.auth',
    flag: { name: 'catalog-auth', type: 'string', for: ['job'], choices: CATALOG_AUTH_KINDS },
    env: ['INSIGHT_EXPORT_CATALOG_AUTH'],
    ...choiceSetting(CATALOG_AUTH_KINDS),
    default: () => 'none' as CatalogAuthKind,
    defaultText: 'none',
    doc: 'How catalog requests are authenticated: "none" (default), "bearer" (INSIGHT_EXPORT_CATALOG_TOKEN), "oauth2" (client credentials INSIGHT_EXPORT_CATALOG_CLIENT_ID and INSIGHT_EXPORT_CATALOG_CLIENT_SECRET at token_endpoint, fetched again before expiry), "sigv4" (AWS Glue, S3 Tables: signed with the AWS credential chain).',
    places: ALL,
  },
  'output.catalog_token_endpoint': {
    key: 'output.catalog_token_endpoint',
    fileKey: 'output.catalog.token_endpoint',
    flag: { name: 'catalog-token-endpoint', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_TOKEN_ENDPOINT'],
    ...url,
    doc: "auth oauth2: the token endpoint of the client-credentials grant. Default: the catalog's <uri>/v1/oauth/tokens.",
    places: ALL,
  },
  'output.catalog_scope': {
    key: 'output.catalog_scope',
    fileKey: 'output.catalog.scope',
    flag: { name: 'catalog-scope', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_SCOPE'],
    ...text,
    doc: 'auth oauth2: the scope asked for, e.g. "PRINCIPAL_ROLE:ALL" (Polaris); default none.',
    places: ALL,
  },
  'output.catalog_signing_name': {
    key: 'output.catalog_signing_name',
    fileKey: 'output.catalog.signing_name',
    flag: { name: 'catalog-signing-name', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_SIGNING_NAME'],
    ...text,
    default: () => 'glue',
    defaultText: 'glue',
    doc: 'auth sigv4: the service name requests are signed for: "glue" (default) or "s3tables".',
    places: ALL,
  },
  'output.catalog_signing_region': {
    key: 'output.catalog_signing_region',
    fileKey: 'output.catalog.signing_region',
    flag: { name: 'catalog-signing-region', type: 'string', for: ['job'] },
    env: ['INSIGHT_EXPORT_CATALOG_SIGNING_REGION'],
    ...text,
    doc: 'auth sigv4: the region requests are signed for. Default: s3.region.',
    places: ALL,
  },
  'output.catalog_token': {
    key: 'output.catalog_token',
    fileKey: 'output.catalog.token',
    env: ['INSIGHT_EXPORT_CATALOG_TOKEN'],
    secret: true,
    parse: anyString,
    doc: 'auth bearer: the catalog token (secret: environment only).',
    places: ['env'],
  },
  'output.catalog_client_id': {
    key: 'output.catalog_client_id',
    fileKey: 'output.catalog.client_id',
    env: ['INSIGHT_EXPORT_CATALOG_CLIENT_ID'],
    secret: true,
    parse: anyString,
    doc: 'auth oauth2: the client id (secret: environment only).',
    places: ['env'],
  },
  'output.catalog_client_secret': {
    key: 'output.catalog_client_secret',
    fileKey: 'output.catalog.client_secret',
    env: ['INSIGHT_EXPORT_CATALOG_CLIENT_SECRET'],
    secret: true,
    parse: anyString,
    doc: 'auth oauth2: the client secret (secret: environment only).',
    places: ['env'],
  },
} as const satisfies Record<string, Setting>;
