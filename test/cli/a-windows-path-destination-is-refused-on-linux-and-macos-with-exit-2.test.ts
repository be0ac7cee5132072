/**
 * Issue 31.9: `destination: C:\data\insight\m3` on Linux silently made one folder named
 * `C:\data\insight\m3` under the working directory (a legal POSIX file name). A Windows path (a
 * drive letter, "\" separators) given as a local destination or staging directory, in a job file
 * or a flag, is refused with exit 2 and nothing is created; on Windows such paths stay what they are.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseStoreDestination } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('windows-path-');
const cwd = process.cwd();

const job = (destination: string) => `name: windows-path
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
  destination: ${destination}
`;

let work = '';
beforeAll(() => {
  work = join(tmp.dir, 'work');
  mkdirSync(work);
  process.chdir(work);
});
afterAll(() => process.chdir(cwd));

describe('on Linux and macOS (this system)', () => {
  it('a job file destination with a drive letter: exit 2 naming the line, no folder made', async () => {
    writeFileSync('job.yaml', job('C:\\data\\insight\\m3'));
    const r = await runCli(['run', 'job.yaml', '--log-level', 'silent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/job\.yaml:13/);
    expect(r.stderr).toContain('is a Windows path (a drive letter)');
    expect(readdirSync(work)).toEqual(['job.yaml']);
  });

  it('a --destination or --staging-dir with "\\" separators or a UNC share: exit 2, no folder made', async () => {
    writeFileSync('job.yaml', job('./out'));
    for (const args of [
      ['--destination', 'out\\m3'],
      ['--destination', '\\\\server\\share\\insight'],
      ['--staging-dir', 'C:/tmp/insight'],
    ]) {
      const r = await runCli(['run', 'job.yaml', ...args, '--log-level', 'silent']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('is a Windows path');
      expect(r.stderr, args.join(' ')).toContain(args[0]!);
      expect(readdirSync(work)).toEqual(['job.yaml']);
    }
  });
});

it('on Windows a drive letter or a "/" path is a local folder as meant', () => {
  expect(parseStoreDestination('C:\\data\\insight\\m3', 'D:\\work', 'win32')).toEqual({ kind: 'local', path: 'C:\\data\\insight\\m3' });
  expect(parseStoreDestination('out\\m3', 'D:\\work', 'win32')).toEqual({ kind: 'local', path: 'D:\\work\\out\\m3' });
  expect(parseStoreDestination('/data/insight', 'D:\\work', 'win32')).toEqual({ kind: 'local', path: 'D:\\data\\insight' });
  expect(parseStoreDestination('./out', '/home/me', 'linux')).toEqual({ kind: 'local', path: '/home/me/out' });
});
