/**
 * Issue 45 item 7: `--workers abc` is refused naming "abc" (not "NaN"), and `--workers N` above
 * the machine's cores warns, naming the cores (checked on workerCount itself).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workerCount } from '../../src/commands/worker-count.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('workers-flag-');

function jobFile(): string {
  const file = join(tmp.dir, 'job.yaml');
  writeFileSync(
    file,
    [
      'name: workers-flag',
      'source:',
      '  base_url: sandbox',
      '  chains: [1]',
      'targets:',
      '  - wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869"',
      '    datasets: [transactions]',
      'range:',
      '  from: "2024-02-01"',
      '  to: "2024-02-02"',
      'output:',
      `  destination: ${join(tmp.dir, 'out')}`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('--workers', () => {
  it.each(['abc', '2.5'])('%s is refused naming the value', async (value) => {
    const r = await runCli(['run', jobFile(), '--workers', value, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--workers="${value}": is not a whole number from 1 to 256`);
    expect(r.stderr).not.toMatch(/NaN/);
  });

  it('above the cores warns naming the cores', () => {
    // The count is judged by workerCount (what `run --workers` calls); a module mock of node:os
    // does not reach a CLI already imported by another file of the same worker (isolate: false).
    expect(workerCount(64, 2)).toEqual({
      count: 64,
      aboveCores: {
        requested: 64,
        cores: 2,
        message: expect.stringMatching(/^--workers 64 on 2 cores: workers beyond the cores compete for them/),
      },
    });
    expect(workerCount(64, 1).aboveCores?.message).toMatch(/^--workers 64 on 1 core:/);
    expect(workerCount(2, 2)).toEqual({ count: 2 });
  });
});
