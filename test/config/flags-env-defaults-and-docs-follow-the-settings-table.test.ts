/**
 * Issue 15.2: a setting is declared once (src/settings/settings.ts). The commands' flags, the
 * environment names the resolver reads, the defaults, config/default.yaml, the job file's JSON
 * Schema and docs/settings.md's table all follow it; nothing else defines a flag or reads a variable
 * for a setting.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { parse as parseYamlText } from 'yaml';
import { commands } from '../../src/commands/index.js';
import { PACKAGED_CONFIG_FILE, resolveConfig } from '../../src/config/resolve.js';
import { renderSettingsDoc } from '../../src/config/settings-doc.js';
import { ENV_VARS, SETTING_LIST, type FlagGroup, type Setting } from '../../src/settings/settings.js';
import { jobJsonSchema } from '../../src/job/schema.js';
import { useTempDir } from '../helpers/temp-dir.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const tmp = useTempDir('settings-table-');

/** The commands of each flag group. */
const GROUPS: Record<FlagGroup, string[]> = {
  job: ['run', 'plan', 'validate', 'verify', 'ddl', 'compact', 'config'],
  source: ['resolve', 'decode', 'nfts'],
  run: ['run'],
  write: ['run', 'compact', 'expire-snapshots', 'remove-orphan-files'],
  history: ['expire-snapshots', 'remove-orphan-files'],
};

interface YargsOptions {
  key: Record<string, unknown>;
  string: string[];
  number: string[];
  boolean: string[];
  narg: Record<string, number>;
  default: Record<string, unknown>;
  choices: Record<string, unknown>;
  alias: Record<string, string[]>;
}

async function optionsOf(command: string): Promise<YargsOptions> {
  const all = await commands(() => undefined);
  const cmd = all.find((c) => String(c.command).split(' ')[0] === command);
  if (!cmd || typeof cmd.builder !== 'function') throw new Error(`no command ${command}`);
  const y = yargs([]);
  cmd.builder(y);
  return (y as unknown as { getOptions(): YargsOptions }).getOptions();
}

const withFlag = SETTING_LIST.filter((s): s is Setting & { flag: NonNullable<Setting['flag']> } => s.flag !== undefined);

describe('every flag of the settings table is an option of its commands, as declared', () => {
  for (const s of withFlag) {
    for (const group of s.flag.for) {
      for (const command of GROUPS[group]) {
        it(`${command} --${s.flag.name}`, async () => {
          const o = await optionsOf(command);
          expect(Object.keys(o.key), `${command} has no --${s.flag.name}`).toContain(s.flag.name);
          // A number flag reaches its setting's parser as written, so a bad value is named, not NaN.
          if (s.flag.type === 'number') expect(Object.keys(o.narg), `--${s.flag.name} takes a value`).toContain(s.flag.name);
          else expect(o[s.flag.type], `type of --${s.flag.name}`).toContain(s.flag.name);
          // Layered settings have no yargs default: an absent flag must not hide the config file, environment or job.
          expect(o.default[s.flag.name], `default of --${s.flag.name}`).toEqual(s.flag.type === 'boolean' ? s.default?.() : undefined);
          if (s.flag.choices) expect(o.choices[s.flag.name]).toEqual([...s.flag.choices]);
          if (s.flag.alias) expect(o.alias[s.flag.name]).toContain(s.flag.alias);
        });
      }
    }
  }
});

it('no command defines a flag of a setting by hand (only the table does)', () => {
  const flags = new Set(withFlag.map((s) => s.flag.name));
  const dir = path.join(REPO, 'src/commands');
  const handWritten = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) =>
      [...readFileSync(path.join(dir, f), 'utf8').matchAll(/\.(?:option|positional)\(\s*'([a-z0-9-]+)'/g)].map((m) => `${f}: --${m[1]}`),
    )
    .filter((where) => flags.has(where.split('--')[1]!));
  expect(handWritten).toEqual([]);
});

/** A valid value from the environment for each setting read there. */
const ENV_SAMPLES: Record<string, string> = {
  'source.base_url': 'http://127.0.0.1:9/v1',
  'source.explorer_url': 'http://127.0.0.1:9/api/v2',
  's3.endpoint': 'http://127.0.0.1:7480',
  's3.region': 'eu-west-1',
  's3.retry_budget_ms': '45s',
  'output.iceberg_commit_interval_ms': '2m',
  'output.catalog_uri': 'http://127.0.0.1:9/iceberg',
  'output.catalog_warehouse': 'wh',
  'output.catalog_namespace': 'a.b',
  'output.catalog_auth': 'oauth2',
  'output.catalog_token_endpoint': 'http://127.0.0.1:9/iceberg/v1/oauth/tokens',
  'output.catalog_scope': 'PRINCIPAL_ROLE:ALL',
  'output.catalog_signing_name': 's3tables',
  'output.catalog_signing_region': 'eu-west-1',
  'output.catalog_token': 't0ken',
  'output.catalog_client_id': 'client',
  'output.catalog_client_secret': 's3cret',
  'concurrency.requests_in_flight': '3',
  'concurrency.units_in_flight': '3',
  'concurrency.workers': '3',
  'concurrency.requests_per_second': '3',
  'retries.max_attempts': '3',
  'retries.timeout_ms': '3s',
  'output.destination': '/data/env',
  'output.snapshot_retention_ms': '3d',
  'source.settle_horizon_ms': '6h',
  'source.chain_ids_per_request': '50',
  stop_grace_ms: '10s',
  staging_dir: '/tmp/env',
  log_level: 'warn',
  log_format: 'json',
  'auth.client_id': 'id-from-env',
  'auth.secret_key': 'key-from-env',
};

describe('every environment variable of the table is read by the resolver', () => {
  for (const s of SETTING_LIST.filter((x) => x.env?.length && x.key !== 'config_file')) {
    for (const name of s.env!) {
      it(`${name} sets ${s.key}`, () => {
        const sample = ENV_SAMPLES[s.key];
        expect(sample, `add a sample value of ${s.key} to ENV_SAMPLES`).toBeDefined();
        const c = resolveConfig({ env: { [name]: sample }, configFile: null });
        expect(c.origins[s.key]).toBe(`env ${name}`);
      });
    }
  }

  it('INSIGHT_EXPORT_CONFIG names the config file', () => {
    const file = path.join(tmp.dir, 'c.yaml');
    writeFileSync(file, 'log_level: error\n');
    const c = resolveConfig({ env: { INSIGHT_EXPORT_CONFIG: file } });
    expect(c.configFile).toBe(file);
    expect(c.logLevel).toBe('error');
  });

  it('the source reads no INSIGHT_* variable of its own outside the table (run-level options excepted)', () => {
    const notSettings = new Set(['INSIGHT_EXPORT_PUSHGATEWAY_URL', 'INSIGHT_EXPORT_SHARD']);
    const read = new Set<string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts') && !p.includes('/sandbox/'))
          for (const m of readFileSync(p, 'utf8').matchAll(/\b(?:env|process\.env)(?:\.|\?\.|\[')(INSIGHT_[A-Z_]+)/g)) read.add(m[1]!);
      }
    };
    walk(path.join(REPO, 'src'));
    expect(read.size).toBeGreaterThan(0);
    expect([...read].filter((n) => !(n in ENV_VARS) && !notSettings.has(n))).toEqual([]);
  });
});

describe('defaults: the table, the resolver and config/default.yaml agree', () => {
  const builtIn = resolveConfig({ env: {}, configFile: null });
  const yamlText = readFileSync(PACKAGED_CONFIG_FILE, 'utf8');
  const yamlValue = parseYamlText(yamlText) as Record<string, unknown>;

  for (const s of SETTING_LIST.filter((x) => x.places.includes('config'))) {
    const fileKey = s.fileKey ?? s.key;
    const [section, name] = fileKey.includes('.') ? fileKey.split('.') : [undefined, fileKey];
    it(`${fileKey}`, () => {
      if (s.default) expect(builtIn.origins[s.key] ?? 'default', `${s.key} has a built-in default`).toBe('default');
      // Documented in config/default.yaml: the key (set, or commented out) in its section, and every environment variable.
      const sectionText = section ? (yamlText.split(new RegExp(`^${section}:\\s*$`, 'm'))[1] ?? '').split(/^\S/m)[0]! : yamlText;
      expect(sectionText, `config/default.yaml documents ${fileKey}`).toMatch(new RegExp(`^\\s*#?\\s*${name}:`, 'm'));
      for (const env of s.env ?? []) expect(yamlText, `config/default.yaml names ${env}`).toContain(env);
      // A value the file sets is the built-in default, parsed by the table's own file schema.
      const written = section ? (yamlValue[section] as Record<string, unknown> | undefined)?.[name!] : yamlValue[name!];
      if (written !== undefined) {
        expect(s.default, `${fileKey} is set in config/default.yaml but has no default in the table`).toBeDefined();
        expect(s.file!(REPO).parse(written)).toEqual(s.default!());
      }
    });
  }
});

describe('docs: the JSON Schema and docs/settings.md say what the table says', () => {
  const schema = jobJsonSchema() as { properties: Record<string, { properties?: Record<string, { description?: string }> }> };
  for (const s of SETTING_LIST.filter((x) => x.places.includes('job'))) {
    const [section, ...names] = (s.fileKey ?? s.key).split('.');
    it(`job.schema.json describes ${[section, ...names].join('.')} with the table's doc`, () => {
      type Prop = { description?: string; properties?: Record<string, Prop>; anyOf?: Prop[] };
      const fieldsOf = (p: Prop | undefined) => p?.properties ?? p?.anyOf?.find((a) => a.properties)?.properties;
      // A grouped field (`output.catalog.uri`) is a field of its group's object.
      let prop: Prop | undefined = schema.properties[section!] as Prop;
      for (const name of names) prop = fieldsOf(prop)?.[name];
      expect(prop?.description).toBe(s.doc);
    });
  }

  it('docs/settings.md holds the table as generated', () => {
    const readme = readFileSync(path.join(REPO, 'docs/settings.md'), 'utf8');
    expect(readme).toContain(renderSettingsDoc());
    for (const s of withFlag) expect(readme).toContain(`\`--${s.flag.name}\``);
  });
});
