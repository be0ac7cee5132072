/**
 * Chains of one window share their requests (several chain_id per request) but commit on their
 * own: when the store refuses one chain's files, that chain's windows fail and are named in the
 * report, while every window of the other chain sharing those requests is committed, and the next
 * run, with the store writable again, exports only what failed.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';
import type { RunReport } from '../../src/run/report.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const tmp = useTempDir('per-chain-commit-');

function writeJob(dest: string): string {
  const file = join(tmp.dir, 'job.yaml');
  writeFileSync(
    file,
    [
      'name: per-chain',
      'source:',
      '  base_url: sandbox',
      '  chains: [1, 8453]',
      'targets:',
      `  - wallet: "${ALICE}"`,
      '    datasets: [transactions]',
      'range:',
      '  from: "2024-02-01"',
      '  to: "2024-02-04"',
      '  chunk: 6h',
      'output:',
      '  format: ndjson',
      `  destination: ${dest}`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('one chain whose commit fails', () => {
  it('fails only its own windows; the other chain of the same requests commits all of its windows', async () => {
    const dest = join(tmp.dir, 'out');
    const job = writeJob(dest);
    // A plain file where chain 1's folder must be: every upload of that chain fails, nothing else does.
    mkdirSync(join(dest, 'transactions'), { recursive: true });
    writeFileSync(join(dest, 'transactions', 'chain_id=1'), 'not a folder');

    const first = await runCli(['run', job, '--json']);
    expect(first.code).toBe(1);
    const report = JSON.parse(first.stdout) as RunReport;
    const failedChains = new Set(report.failed.map((f) => f.unit.split('/').at(-2)));
    expect([...failedChains]).toEqual(['1']);
    // 12 windows of 6 h per chain; those of chain 1 with rows fail, every one of 8453 is done.
    expect(report.windows.planned).toBe(24);
    expect(report.windows.done).toBe(24 - report.failed.length);
    expect(report.failed.length).toBeGreaterThan(0);

    rmSync(join(dest, 'transactions', 'chain_id=1'));
    const next = await runCli(['run', job, '--json']);
    expect(next.code, next.stderr).toBe(0);
    const nextReport = JSON.parse(next.stdout) as RunReport;
    expect(nextReport.windows.planned).toBe(report.failed.length);
    expect(nextReport.windows.done).toBe(report.failed.length);
  });
});
