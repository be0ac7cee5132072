/**
 * Issue 44 item 1: the catalog's settings are declared once (src/settings/catalog-settings.ts) and
 * read as `output.catalog.*` from a job file (one object), flags and the environment; its secrets
 * only from the environment, never shown; an authentication without its secret is refused (exit 2).
 */
import { describe, expect, it } from 'vitest';
import { describeConfig, resolveConfig } from '../../src/config/resolve.js';
import { ExitCode } from '../../src/errors.js';
import { catalogOfConfig } from '../../src/iceberg/index.js';
import { parseJob } from '../../src/job/load.js';

const job = (catalog: string) =>
  parseJob(
    `name: cataloged
source: { base_url: "http://127.0.0.1:4/v1", chains: [1] }
targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: 1, to: 2 }
output:
  destination: /data/out
  format: iceberg
  catalog:
${catalog}
`,
    'jobs/cataloged.yaml',
  );

describe('output.catalog settings', () => {
  it('a job file sets them as one object; a flag overrides one field; the namespace defaults to the job name', () => {
    const j = job('    uri: http://127.0.0.1:9/iceberg\n    warehouse: wh\n    auth: oauth2\n    scope: "PRINCIPAL_ROLE:ALL"');
    const c = resolveConfig({
      job: j,
      env: { INSIGHT_EXPORT_CATALOG_CLIENT_ID: 'exporter', INSIGHT_EXPORT_CATALOG_CLIENT_SECRET: 'never-shown' },
      cliFlags: { catalogWarehouse: 'from-flag' },
      configFile: null,
    });
    expect(c.output).toMatchObject({
      catalogUri: 'http://127.0.0.1:9/iceberg',
      catalogWarehouse: 'from-flag',
      catalogAuth: 'oauth2',
      catalogScope: 'PRINCIPAL_ROLE:ALL',
      catalogNamespace: null,
    });
    expect(c.origins['output.catalog_uri']).toBe('job jobs/cataloged.yaml');
    expect(describeConfig(c)).not.toContain('never-shown');
    expect(catalogOfConfig(c, j.name)?.namespace).toEqual(['cataloged']);
  });

  it('a field the group does not know is refused with its place in the file', () => {
    expect(() => job('    uri: http://127.0.0.1:9/iceberg\n    token: in-the-file')).toThrow(/catalog/);
  });

  it('an authentication without its secret in the environment is refused, exit 2; no uri means no catalog', () => {
    const c = resolveConfig({ job: job('    uri: http://127.0.0.1:9/iceberg\n    auth: bearer'), env: {}, configFile: null });
    expect(() => catalogOfConfig(c, 'cataloged')).toThrow(
      expect.objectContaining({ exitCode: ExitCode.badInput, hint: expect.stringContaining('INSIGHT_EXPORT_CATALOG_TOKEN') }),
    );
    const none = resolveConfig({ env: {}, configFile: null });
    expect(catalogOfConfig(none, 'x')).toBeNull();
  });
});
