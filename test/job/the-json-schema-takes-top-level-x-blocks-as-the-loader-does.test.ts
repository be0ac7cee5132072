/**
 * Issue 45 item 7: the loader takes top-level `x-` keys (blocks to anchor and merge elsewhere, as in
 * docker-compose files) but schema/job.schema.json refused them, so an editor with the schema
 * flagged a job `run` accepts. The committed schema, checked by Ajv (JSON Schema 2020-12), takes
 * them at the top level and still refuses them, and other unknown keys, elsewhere.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/job/index.js';
import { JOB_SCHEMA_FILE } from '../../src/job/write-schema.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const validate = new Ajv2020({ strict: false, allErrors: true }).compile(JSON.parse(readFileSync(JOB_SCHEMA_FILE, 'utf8')) as object);

const job = (head: string[], walletExtra: string[] = []) =>
  [
    ...head,
    'name: blocks',
    'source: {base_url: sandbox, chains: [1]}',
    'targets:',
    `  - wallet: "${ALICE}"`,
    ...walletExtra,
    'range: {from: "2024-02-01", to: "2024-02-02"}',
    'output: {destination: ./out}',
    '',
  ].join('\n');

describe('schema/job.schema.json', () => {
  it('takes top-level x- keys, as the loader does', () => {
    const text = job(['x-common: &common', '  datasets: [transactions]', 'x-note: a string is a block too']);
    expect(() => parseJob(text, 'job.yaml')).not.toThrow();
    const ok = validate(parse(text));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('still refuses an x- key inside a section, and other unknown top-level keys, as the loader does', () => {
    for (const text of [job([], ['    x-note: here']), job(['y-note: 1'])]) {
      expect(() => parseJob(text, 'job.yaml')).toThrow(/unknown key/);
      expect(validate(parse(text))).toBe(false);
    }
  });
});
