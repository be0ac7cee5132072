/**
 * Issue 31.9: a relative destination is taken from the working directory, which differs between a
 * shell and cron. In a job file, `destination: "{job_dir}/out"` is taken from the job file's folder
 * whatever the working directory; `./out` keeps meaning the working directory's; `{job_dir}` outside
 * a job file (a flag) is refused with exit 2.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('job-dir-destination-');
const cwd = process.cwd();

const job = (destination: string) => `name: job-dir
source:
  base_url: sandbox
  chains: [1]
targets:
  - wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869"
    datasets: [transactions]
range:
  from: "2024-02-01"
  to: "2024-02-02"
  chunk: 1d
output:
  format: ndjson
  destination: "${destination}"
`;

let jobs = '';
let shell = '';
beforeAll(() => {
  jobs = join(tmp.dir, 'srv', 'jobs');
  shell = join(tmp.dir, 'home');
  mkdirSync(jobs, { recursive: true });
  mkdirSync(shell);
  process.chdir(shell);
});
afterAll(() => process.chdir(cwd));

it('"{job_dir}/out" is the job file\'s folder, wherever the run starts', async () => {
  writeFileSync(join(jobs, 'beside.yaml'), job('{job_dir}/out'));
  const r = await runCli(['run', join(jobs, 'beside.yaml'), '--log-level', 'silent', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect((JSON.parse(r.stdout) as { destination: string; rows: number }).destination).toBe(join(jobs, 'out'));
  expect(readdirSync(join(jobs, 'out'))).toContain('transactions');
  expect(readdirSync(shell)).toEqual([]);
}, 60_000);

it('"./out" stays the working directory\'s', async () => {
  writeFileSync(join(jobs, 'here.yaml'), job('./out'));
  const r = await runCli(['run', join(jobs, 'here.yaml'), '--log-level', 'silent', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(readdirSync(join(shell, 'out'))).toContain('transactions');
}, 60_000);

it('{job_dir} in a flag, or not at the start of the path, is refused with exit 2', async () => {
  const r = await runCli(['run', join(jobs, 'here.yaml'), '--destination', '{job_dir}/elsewhere', '--log-level', 'silent']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("uses {job_dir}, which only a job file's output.destination takes");
  writeFileSync(join(jobs, 'inside.yaml'), job('./out/{job_dir}'));
  const inside = await runCli(['validate', join(jobs, 'inside.yaml')]);
  expect(inside.code).toBe(2);
  expect(inside.stderr).toContain('has {job_dir} elsewhere than at its start');
  expect(existsSync(join(shell, 'elsewhere'))).toBe(false);
});
