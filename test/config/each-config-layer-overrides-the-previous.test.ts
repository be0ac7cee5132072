import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, ConfigFileError, PACKAGED_CONFIG_FILE, resolveConfig } from '../../src/config/resolve.js';
import { parseJob } from '../../src/job/load.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('config-test-');
function file(name: string, text: string): string {
  const p = path.join(tmp.dir, name);
  writeFileSync(p, text);
  return p;
}

let CONFIG: string;
beforeAll(() => {
  CONFIG = file(
    'config.yaml',
    `source:
  base_url: http://127.0.0.1:1/from-config
concurrency:
  requests_in_flight: 2
  units_in_flight: 2
  requests_per_second: 2
retries: { max_attempts: 2, timeout: 2s }
output:
  format: ndjson
  destination: /data/from-config
  max_rows_per_file: 2
staging_dir: /tmp/from-config
log_level: warn
`,
  );
});

const ENV = {
  INSIGHT_BASE_URL: 'http://127.0.0.1:3/from-env',
  INSIGHT_EXPORT_REQUESTS_IN_FLIGHT: '3',
  INSIGHT_EXPORT_UNITS_IN_FLIGHT: '3',
  INSIGHT_EXPORT_MAX_ATTEMPTS: '3',
  INSIGHT_EXPORT_DESTINATION: '/data/from-env',
  INSIGHT_EXPORT_STAGING_DIR: '/tmp/from-env',
  INSIGHT_EXPORT_LOG_LEVEL: 'debug',
};

const JOB = parseJob(
  `name: layered
source: { base_url: "http://127.0.0.1:4/from-job", chains: [1] }
targets: [{ wallet: "0x1111111111111111111111111111111111111111" }]
range: { from: 1, to: 2 }
concurrency: { requests_in_flight: 4 }
retries: { max_attempts: 4 }
output: { destination: /data/from-job, format: parquet }
`,
  'jobs/layered.yaml',
);

const FLAGS = { requestsInFlight: '5', destination: '/data/from-flag' };

describe('configuration precedence: defaults < config file < environment < job file < CLI flags', () => {
  it('defaults apply when nothing else is given', () => {
    const c = resolveConfig({ env: {}, configFile: null });
    expect(c.concurrency).toEqual({ requestsInFlight: 8, unitsInFlight: 4, requestsPerSecond: 0, workers: 1 });
    expect(c.retries).toEqual({ maxAttempts: 6, timeoutMs: 30_000 });
    expect(c.output).toMatchObject({
      format: 'parquet',
      compression: 'zstd',
      parquetEngine: 'duckdb',
      destination: null,
      maxRowsPerFile: 1_000_000,
      maxBytesPerFile: 512_000_000,
    });
    expect(c.stagingDir).toBe(path.join(os.tmpdir(), 'insight-export'));
    expect(c.logLevel).toBe('info');
    expect(c.origins['concurrency.requests_in_flight']).toBe('default');
  });

  it('the config file overrides defaults', () => {
    const c = resolveConfig({ env: {}, configFile: CONFIG });
    expect(c.source.baseUrl).toBe('http://127.0.0.1:1/from-config');
    expect(c.concurrency).toEqual({ requestsInFlight: 2, unitsInFlight: 2, requestsPerSecond: 2, workers: 1 });
    expect(c.retries).toEqual({ maxAttempts: 2, timeoutMs: 2000 });
    expect(c.output.format).toBe('ndjson');
    expect(c.output.compression).toBe('gzip'); // the default follows the format
    expect(c.output.destination?.url).toBe('/data/from-config');
    expect(c.stagingDir).toBe('/tmp/from-config');
    expect(c.logLevel).toBe('warn');
    expect(c.origins['retries.max_attempts']).toBe(`config ${CONFIG}`);
  });

  it('the environment overrides the config file', () => {
    const c = resolveConfig({ env: ENV, configFile: CONFIG });
    expect(c.source.baseUrl).toBe('http://127.0.0.1:3/from-env');
    expect(c.concurrency).toEqual({ requestsInFlight: 3, unitsInFlight: 3, requestsPerSecond: 2, workers: 1 });
    expect(c.retries.maxAttempts).toBe(3);
    expect(c.output.destination?.url).toBe('/data/from-env');
    expect(c.stagingDir).toBe('/tmp/from-env');
    expect(c.logLevel).toBe('debug');
    expect(c.origins['concurrency.units_in_flight']).toBe('env INSIGHT_EXPORT_UNITS_IN_FLIGHT');
  });

  it('the job file overrides the environment', () => {
    const c = resolveConfig({ env: ENV, configFile: CONFIG, job: JOB });
    expect(c.source.baseUrl).toBe('http://127.0.0.1:4/from-job');
    expect(c.concurrency).toEqual({ requestsInFlight: 4, unitsInFlight: 3, requestsPerSecond: 2, workers: 1 });
    expect(c.retries.maxAttempts).toBe(4);
    expect(c.output.destination?.url).toBe('/data/from-job');
    expect(c.output.format).toBe('parquet');
    expect(c.output.compression).toBe('zstd');
    expect(c.origins['output.destination']).toBe('job jobs/layered.yaml');
  });

  it('CLI flags override the job file', () => {
    const c = resolveConfig({ env: ENV, configFile: CONFIG, job: JOB, cliFlags: FLAGS });
    expect(c.concurrency.requestsInFlight).toBe(5);
    expect(c.output.destination?.url).toBe('/data/from-flag');
    expect(c.retries.maxAttempts).toBe(4); // no flag: the job still wins
    expect(c.origins['concurrency.requests_in_flight']).toBe('flag --requests-in-flight');
  });

  it('INSIGHT_EXPORT_CONFIG names the config file; S3_ENDPOINT wins over AWS_ENDPOINT_URL_S3', () => {
    const c = resolveConfig({
      env: {
        INSIGHT_EXPORT_CONFIG: CONFIG,
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:7000',
        S3_ENDPOINT: 'http://127.0.0.1:7480',
        AWS_REGION: 'eu-west-1',
      },
    });
    expect(c.configFile).toBe(CONFIG);
    expect(c.concurrency.requestsInFlight).toBe(2);
    expect(c.s3).toEqual({ endpoint: 'http://127.0.0.1:7480', region: 'eu-west-1', forcePathStyle: true, retryBudgetMs: 30_000 });
  });

  it('the S3 retry budget: 30 s by default, then the config file, INSIGHT_EXPORT_S3_RETRY_BUDGET, --s3-retry-budget', () => {
    expect(resolveConfig({ env: {}, configFile: null }).s3.retryBudgetMs).toBe(30_000);
    const file = path.join(tmp.dir, 's3-budget.yaml');
    writeFileSync(file, 's3:\n  retry_budget: 1m\n');
    expect(resolveConfig({ env: {}, configFile: file }).s3.retryBudgetMs).toBe(60_000);
    const env = resolveConfig({ env: { INSIGHT_EXPORT_S3_RETRY_BUDGET: '45s' }, configFile: file });
    expect(env.s3.retryBudgetMs).toBe(45_000);
    expect(env.origins['s3.retry_budget_ms']).toBe('env INSIGHT_EXPORT_S3_RETRY_BUDGET');
    const flag = resolveConfig({ env: { INSIGHT_EXPORT_S3_RETRY_BUDGET: '45s' }, configFile: file, cliFlags: { s3RetryBudget: '2m' } });
    expect(flag.s3.retryBudgetMs).toBe(120_000);
    expect(() => resolveConfig({ env: { INSIGHT_EXPORT_S3_RETRY_BUDGET: '0s' }, configFile: null })).toThrow(
      /INSIGHT_EXPORT_S3_RETRY_BUDGET.*longer than 0/,
    );
  });

  it('the packaged config/default.yaml says exactly the built-in defaults', () => {
    const packaged = resolveConfig({ env: {}, configFile: PACKAGED_CONFIG_FILE });
    const builtIn = resolveConfig({ env: {}, configFile: null });
    const { origins: _a, configFile: _b, ...p } = packaged;
    const { origins: _c, configFile: _d, ...b } = builtIn;
    expect(p).toEqual(b);
    expect(resolveConfig({ env: {} }).configFile).toBe(PACKAGED_CONFIG_FILE);
  });

  it('is frozen', () => {
    const c = resolveConfig({ env: {}, configFile: null });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.output)).toBe(true);
    expect(() => {
      (c.concurrency as { requestsInFlight: number }).requestsInFlight = 99;
    }).toThrow(TypeError);
  });

  it('validates once across layers and names the layer of each value', () => {
    let err: unknown;
    try {
      resolveConfig({
        env: { INSIGHT_EXPORT_REQUESTS_IN_FLIGHT: 'many' },
        configFile: CONFIG,
        cliFlags: { compression: 'zstd' },
        require: ['source', 'destination'],
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('INSIGHT_EXPORT_REQUESTS_IN_FLIGHT="many": is not a whole number from 1 to 1024');
    expect(msg).toContain(
      `output.compression=zstd (flag --compression): is not available for NDJSON (output.format from config ${CONFIG})`,
    );
    expect((err as ConfigError).exitCode).toBe(2);
  });

  it('requires a source and a destination only when asked', () => {
    expect(() => resolveConfig({ env: {}, configFile: null, require: ['source'] })).toThrow(/source.base_url: is not set/);
    expect(() => resolveConfig({ env: {}, configFile: null, require: ['destination'] })).toThrow(/output.destination: is not set/);
    expect(resolveConfig({ env: {}, configFile: null, cliFlags: { baseUrl: 'sandbox' }, require: ['source'] }).source.sandbox).toBe(true);
  });

  it('reports config file problems with file:line and field', () => {
    const bad = file('bad.yaml', 'concurrency:\n  requests_in_flight: 0\noutput:\n  formt: ndjson\n');
    let err: unknown;
    try {
      resolveConfig({ env: {}, configFile: bad });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigFileError);
    const problems = (err as ConfigFileError).problems.map((p) => [p.line, p.field]);
    expect(problems).toEqual([
      [2, 'concurrency.requests_in_flight'],
      [4, 'output.formt'],
    ]);
    expect((err as Error).message).toContain(`${bad}:4:3 output.formt: unknown key "formt"`);
  });
});
