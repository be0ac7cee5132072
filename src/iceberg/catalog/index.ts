/**
 * The exporter's client of an Apache Iceberg REST catalog: see
 * rest-catalog-client.ts for why it is our own thin client over undici.
 */
export { RestCatalogClient } from './rest-catalog-client.js';
export type { RestCatalogSettings } from './rest-catalog-client.js';
export type { AwsCredentials, AwsCredentialsSource, CatalogAuthSettings } from './catalog-auth.js';
export * from './catalog-errors.js';
export { mainSnapshotId } from './catalog-types.js';
export type * from './catalog-types.js';
