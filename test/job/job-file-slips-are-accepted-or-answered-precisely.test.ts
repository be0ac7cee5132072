/**
 * Issue 45 item 7: the job-file slips a new user makes. Whitespace in a signature, YAML merge keys
 * and `x-` blocks are accepted; a chain written by name, a bucket with capitals or "_", and
 * `tables:` on a contract target get an answer that says what to write. Through `validate`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const SUSD = '0x77f5e148a71be22cf4f3a1816626b240547b6302';
const tmp = useTempDir('job-slips-');

function job(opts: { chains?: string; targets: string[]; destination?: string; head?: string[] }): string {
  return [
    ...(opts.head ?? []),
    'name: slips',
    'source:',
    '  base_url: sandbox',
    `  chains: ${opts.chains ?? '[1]'}`,
    'targets:',
    ...opts.targets,
    'range:',
    '  from: "2024-02-01"',
    '  to: "2024-02-02"',
    'output:',
    `  destination: ${opts.destination ?? join(tmp.dir, 'out')}`,
    '',
  ].join('\n');
}

async function validate(text: string) {
  const file = join(tmp.dir, 'job.yaml');
  writeFileSync(file, text);
  return runCli(['validate', file]);
}

describe('job-file slips', () => {
  it.each([
    ['a space before "("', 'Transfer (address indexed from, address indexed to, uint256 value)'],
    ['two spaces before indexed', 'Transfer(address  indexed from, address indexed to,  uint256 value )'],
  ])('a signature with %s is read as its words', async (_, sig) => {
    const r = await validate(job({ targets: [`  - contract: "${SUSD}"`, `    events: ["${sig}"]`] }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('merge keys are resolved and top-level x- keys ignored, as docker-compose does', async () => {
    const head = ['x-common: &common', '  datasets: [transactions]', '  chains: [1]'];
    const r = await validate(job({ head, targets: [`  - wallet: "${ALICE}"`, '    <<: *common'] }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/1 target\(s\), 1 unit stream\(s\)/);
  });

  it('a chain written by name gets its id', async () => {
    const r = await validate(job({ chains: '[ethereum]', targets: [`  - wallet: "${ALICE}"`] }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/job\.yaml:4:\d+ source\.chains\[0\]/);
    expect(r.stderr).toMatch(/chains are numeric ids: ethereum is 1/);
  });

  it('a bucket name with capitals or "_" is answered with the naming rule', async () => {
    const r = await validate(job({ destination: 's3://My_Bucket/exports', targets: [`  - wallet: "${ALICE}"`] }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/output\.destination/);
    expect(r.stderr).toMatch(/bucket names are lowercase, no underscores/);
    expect(r.stderr).toMatch(/"my-bucket"/);
  });

  it('tables: on a contract target says it belongs to each event, not "did you mean tables"', async () => {
    const sig = 'Transfer(address indexed from, address indexed to, uint256 value)';
    const r = await validate(job({ targets: [`  - contract: "${SUSD}"`, '    tables: {events: transfers}', `    events: ["${sig}"]`] }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/targets\[0\]\.tables: unknown key "tables"/);
    expect(r.stderr).not.toMatch(/did you mean "tables"/);
    expect(r.stderr).toMatch(/tables per event: events: \[\{signature: .*tables: \{events: /);
  });
});
