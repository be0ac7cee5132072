/**
 * Issue 45 item 6: `validate` passed jobs `run` then refused with exit 2. Each case here passed
 * `validate` before: validate now refuses it as run does, naming the file, line and field.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const tmp = useTempDir('validate-run-refusals-');

function jobFile(targets: string[], output: string[] = []): string {
  const file = join(tmp.dir, 'job.yaml');
  const lines = ['name: refusals', 'source:', '  base_url: sandbox', '  chains: [1]', 'targets:', ...targets];
  const tail = ['range:', '  from: "2024-02-01"', '  to: "2024-02-02"', 'output:', `  destination: ${join(tmp.dir, 'out')}`, ...output, ''];
  writeFileSync(file, [...lines, ...tail].join('\n'));
  return file;
}

describe('validate refuses what run refuses', () => {
  const nameAndAddress = [`  - wallet: ${ALICE}`, '  - wallet: alice.eth'];

  it('one wallet given once by address and once by name (the name resolved through the service)', async () => {
    const r = await runCli(['validate', jobFile(nameAndAddress)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('The wallet "alice.eth" is already targets[0]');
    expect(r.stderr).toMatch(
      /job\.yaml:7:\d+ targets\[1\]\.wallet resolves to 0x344940aef33a4e9915b793dfe282f3727eff9869, as \S*job\.yaml:6:\d+ targets\[0\]\.wallet does/,
    );
  });

  it('--offline sends no request and names each wallet name it did not resolve', async () => {
    const r = await runCli(['validate', '--offline', '--json', jobFile(nameAndAddress)]);
    expect(r.code).toBe(0);
    const [verdict] = JSON.parse(r.stdout) as { warnings: { line: number; field: string; message: string }[] }[];
    expect(verdict!.warnings).toEqual([
      expect.objectContaining({
        line: 7,
        field: 'targets[1].wallet',
        message: expect.stringContaining('not resolved (--offline)') as unknown,
      }),
      expect.objectContaining({ field: 'source.chains', message: expect.stringContaining('not checked (--offline)') as unknown }),
    ]);
  });

  it('an Iceberg destination whose partitioning does not start with {dataset}/ (run refused it after taking the lease)', async () => {
    const file = jobFile([`  - wallet: ${ALICE}`], ['  format: iceberg', '  partitioning: "chain_id={chain_id}/{dataset}/date={date}"']);
    const v = await runCli(['validate', file]);
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/output\.partitioning=.*\(job \S*job\.yaml:13:\d+\): must start with \{dataset\}\/ for Iceberg tables/);
    const r = await runCli(['run', file]);
    expect(r.code).toBe(2);
    expect(existsSync(join(tmp.dir, 'out')), 'a refused run writes nothing').toBe(false);
  });

  it('a job with no destination or service warns that run refuses it without them', async () => {
    const file = join(tmp.dir, 'unset.yaml');
    const text = [
      'name: unset',
      'source:',
      '  chains: [1]',
      'targets:',
      `  - wallet: ${ALICE}`,
      'range: {from: "2024-02-01", to: "2024-02-02"}',
      '',
    ];
    writeFileSync(file, text.join('\n'));
    const v = await runCli(['validate', file, '--json']);
    expect(v.code).toBe(0);
    const [verdict] = JSON.parse(v.stdout) as { warnings: { field: string; message: string }[] }[];
    expect(verdict!.warnings.map((w) => w.field)).toEqual(['output.destination', 'source.base_url']);
    expect(verdict!.warnings[0]!.message).toContain('run refuses the job unless --destination');
    expect((await runCli(['run', file, '--log-level', 'error'])).code).toBe(2);
  });

  it('a wallet name with no service to ask is a warning, as with --offline, not a refusal', async () => {
    const file = join(tmp.dir, 'unset-name.yaml');
    writeFileSync(
      file,
      [
        'name: unset_name',
        'source: {chains: [1]}',
        'targets:',
        '  - wallet: alice.eth',
        'range: {from: "2024-02-01", to: "2024-02-02"}',
        '',
      ].join('\n'),
    );
    const v = await runCli(['validate', file, '--json']);
    expect(v.code, v.stderr).toBe(0);
    const [verdict] = JSON.parse(v.stdout) as { warnings: { field: string; message: string }[] }[];
    expect(verdict!.warnings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'targets[0].wallet',
          message: expect.stringContaining('not resolved (no source.base_url)') as unknown,
        }),
        expect.objectContaining({ field: 'source.base_url' }),
      ]),
    );
  });
});
