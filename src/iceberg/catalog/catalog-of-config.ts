/**
 * The catalog a run commits its tables through, from the resolved settings (output.catalog.*,
 * src/settings/catalog-settings.ts): null without output.catalog.uri. Secrets are revealed here,
 * into the client's authentication only.
 */
import type { ResolvedConfig } from '../../config/index.js';
import type { TableCatalog } from '../catalog-commit.js';
import type { CatalogAuthSettings } from './catalog-auth.js';
import { CatalogSettingsError } from './catalog-errors.js';
import { RestCatalogClient } from './rest-catalog-client.js';

export function catalogOfConfig(config: ResolvedConfig, jobName: string): TableCatalog | null {
  const c = config.output;
  if (c.catalogUri === null) return null;
  const namespace = (c.catalogNamespace ?? jobName).split('.');
  const client = new RestCatalogClient({ uri: c.catalogUri, warehouse: c.catalogWarehouse ?? undefined, auth: authOf(config) });
  return { client, namespace };
}

function authOf(config: ResolvedConfig): CatalogAuthSettings {
  const c = config.output;
  const missing = (what: string, env: string) =>
    new CatalogSettingsError(`output.catalog.auth is ${c.catalogAuth} but ${what} is not set`, `set ${env} in the environment`);
  switch (c.catalogAuth) {
    case 'none':
      return { kind: 'none' };
    case 'bearer':
      if (!c.catalogToken) throw missing('the token', 'INSIGHT_EXPORT_CATALOG_TOKEN');
      return { kind: 'bearer', token: c.catalogToken.reveal() };
    case 'oauth2':
      if (!c.catalogClientId) throw missing('the client id', 'INSIGHT_EXPORT_CATALOG_CLIENT_ID');
      if (!c.catalogClientSecret) throw missing('the client secret', 'INSIGHT_EXPORT_CATALOG_CLIENT_SECRET');
      return {
        kind: 'oauth2',
        clientId: c.catalogClientId.reveal(),
        clientSecret: c.catalogClientSecret.reveal(),
        tokenUrl: c.catalogTokenEndpoint ?? `${c.catalogUri}/v1/oauth/tokens`,
        scope: c.catalogScope ?? undefined,
      };
    case 'sigv4': {
      const region = c.catalogSigningRegion ?? config.s3.region;
      if (!region)
        throw missing('the signing region', 'INSIGHT_EXPORT_CATALOG_SIGNING_REGION (or output.catalog.signing_region, s3.region)');
      return { kind: 'sigv4', region, signingName: c.catalogSigningName };
    }
  }
}
