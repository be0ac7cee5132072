/**
 * Issue 45 item 7: `--max-bytes-per-file 1KB` gave files of ~40 KB. A limit below what a run can
 * honour (a file is cut between pages of rows) is refused, naming the minimum, from the flag and
 * from the job file alike.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('file-size-limit-');

function jobFile(extra: string[] = []): string {
  const file = join(tmp.dir, 'job.yaml');
  const lines = ['name: size-limit', 'source:', '  base_url: sandbox', '  chains: [1]', 'targets:'];
  lines.push('  - wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869"', 'range:', '  from: "2024-02-01"', '  to: "2024-02-02"');
  writeFileSync(file, [...lines, 'output:', `  destination: ${join(tmp.dir, 'out')}`, ...extra, ''].join('\n'));
  return file;
}

describe('max_bytes_per_file', () => {
  it('--max-bytes-per-file 1KB is refused naming the smallest size a run honours', async () => {
    const r = await runCli(['run', jobFile(), '--max-bytes-per-file', '1KB', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-bytes-per-file="1KB": is below 1MB, the smallest file size a run can honour');
  });

  it('in a job file, with its line', async () => {
    const r = await runCli(['validate', jobFile(['  max_bytes_per_file: 1000'])]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/job\.yaml:12:\d+ output\.max_bytes_per_file: 1000 is below 1MB/);
  });

  it('1MB is taken', async () => {
    const r = await runCli(['validate', jobFile(['  max_bytes_per_file: 1MB'])]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
