/**
 * Issue 45 item 7: `--workers abc` is refused naming "abc" (not "NaN"), and `--workers N` above
 * the machine's cores starts one worker per core, saying so with the cores. The machine here has
 * one core (node:os mocked), so the capped run exports in-process: no worker is started.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

vi.mock('node:os', async (importOriginal) => {
  const os = await importOriginal<typeof import('node:os')>();
  return { ...os, default: { ...os, availableParallelism: () => 1 }, availableParallelism: () => 1 };
});

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

  it('above the cores starts one worker per core and says so, naming the cores', async () => {
    const r = await runCli(['run', jobFile(), '--workers', '64', '--dry-run', '--log-format', 'json'], { logs: true });
    expect(r.stderr).toMatch(/--workers 64 on 1 core: starting no workers \(the run exports in this process\)/);
    expect(r.stderr).not.toMatch(/starting the workers/);
    expect(r.code).toBe(0);
  });
});
