/**
 * Issue 14.9: `run a.yaml b.yaml` was refused and `validate` stopped at the first bad file.
 * `run` takes several job files: all are checked first, a bad one is reported by file, line and
 * field and not run, the others run one after another with a report each; the exit code is the
 * most severe of them. `validate` checks every file and reports every problem of each.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode, worstExitCode } from '../../src/errors.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const tmp = useTempDir('cli-several-jobs-');

function job(name: string, day: string, next: string): string {
  return [
    `name: ${name}`,
    'source:',
    '  base_url: sandbox',
    '  chains: [1]',
    'targets:',
    `  - wallet: "${ALICE}"`,
    '    datasets: [transactions]',
    'range:',
    `  from: "${day}"`,
    `  to: "${next}"`,
    '  chunk: 1d',
    'output:',
    `  destination: ${join(tmp.dir, name)}`,
    '',
  ].join('\n');
}

/** Two mistakes on lines 4 and 7 of one file. */
const BAD = [
  'name: bad-one',
  'source:',
  '  base_url: sandbox',
  '  chains: [one]',
  'targets:',
  `  - wallet: "${ALICE}"`,
  '    datasets: [blocks]',
  '',
].join('\n');
/** A wrong key on line 2 of another. */
const BAD2 = ['name: bad-two', 'sourc: {}', ''].join('\n');

function write(name: string, text: string): string {
  const file = join(tmp.dir, name);
  writeFileSync(file, text);
  return file;
}

describe('run with several job files', () => {
  it('runs every good job one after another, reports the bad file by line and field, and exits with the most severe code', async () => {
    const a = write('a.yaml', job('job-a', '2024-02-01', '2024-02-02'));
    const bad = write('bad.yaml', BAD);
    const b = write('b.yaml', job('job-b', '2024-02-02', '2024-02-03'));
    const res = await runCli(['run', a, bad, b, '--log-level', 'silent']);
    expect(res.code).toBe(ExitCode.badInput);
    expect(res.stderr).toContain(`${bad}:4:`);
    expect(res.stderr).toMatch(/source\.chains\[0\]/);
    expect(res.stderr).toMatch(/datasets/);
    // Both good jobs ran (the bad file in between did not stop the second) and each left its report.
    for (const name of ['job-a', 'job-b']) {
      const reports = readdirSync(join(tmp.dir, name, '_state', name, 'reports')).filter((f) => f !== 'last-run.json');
      expect(reports).toHaveLength(1);
      const report = JSON.parse(readFileSync(join(tmp.dir, name, '_state', name, 'reports', reports[0]!), 'utf8'));
      expect(report.status).toBe('succeeded');
      expect(report.rows).toBeGreaterThan(0);
    }
    expect(res.stdout).toMatch(/succeeded: job job-a/);
    expect(res.stdout).toMatch(/succeeded: job job-b/);
    expect(res.stdout).toContain(`exit 2  ${bad}:`);
  }, 120_000);

  it('--json prints one entry per job file, in the order given, with its report or its error', async () => {
    const a = write('c.yaml', job('job-c', '2024-02-01', '2024-02-02'));
    const bad = write('bad2.yaml', BAD2);
    const res = await runCli(['run', bad, a, '--json', '--log-level', 'silent']);
    expect(res.code).toBe(ExitCode.badInput);
    const out = JSON.parse(res.stdout) as { job_file: string; exit_code: number; report?: { job: string; rows: number }; error?: string }[];
    expect(out.map((o) => [o.job_file, o.exit_code])).toEqual([
      [bad, 2],
      [a, 0],
    ]);
    expect(out[0]!.error).toMatch(/problems? in the job file/);
    expect(out[1]!.report).toMatchObject({ job: 'job-c' });
    expect(out[1]!.report!.rows).toBeGreaterThan(0);
  }, 120_000);

  it('the most severe exit code wins: interrupted > bad input > failed > busy > ok', () => {
    expect(worstExitCode([])).toBe(ExitCode.ok);
    expect(worstExitCode([ExitCode.ok, ExitCode.busy])).toBe(ExitCode.busy);
    expect(worstExitCode([ExitCode.busy, ExitCode.failed, ExitCode.ok])).toBe(ExitCode.failed);
    expect(worstExitCode([ExitCode.failed, ExitCode.badInput])).toBe(ExitCode.badInput);
    expect(worstExitCode([ExitCode.badInput, ExitCode.interrupted, ExitCode.failed])).toBe(ExitCode.interrupted);
  });
});

describe('validate with several job files', () => {
  it('checks every file and reports every problem of each; exit 2 when any is bad', async () => {
    const bad = write('v-bad.yaml', BAD);
    const good = write('v-good.yaml', job('job-v', '2024-02-01', '2024-02-02'));
    const bad2 = write('v-bad2.yaml', BAD2);
    const res = await runCli(['validate', bad, good, bad2]);
    expect(res.code).toBe(ExitCode.badInput);
    expect(res.stderr).toContain(`${bad}:4:`);
    expect(res.stderr).toContain(`${bad}:7:`);
    expect(res.stderr).toContain(`${bad2}:2:`);
    expect(res.stdout).toContain(`ok ${good}: job job-v`);
    expect(res.stdout).toContain('1 of 3 job files valid');

    const json = await runCli(['validate', bad, good, bad2, '--json']);
    expect(json.code).toBe(ExitCode.badInput);
    const verdicts = JSON.parse(json.stdout) as { file: string; ok: boolean; error?: { problems: string[] } }[];
    expect(verdicts.map((v) => [v.file, v.ok])).toEqual([
      [bad, false],
      [good, true],
      [bad2, false],
    ]);
    expect(verdicts[0]!.error!.problems.filter((p) => p.startsWith(`${bad}:`))).toHaveLength(2);
  });
});
