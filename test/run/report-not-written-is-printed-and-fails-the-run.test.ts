/**
 * A run whose report cannot be written to the destination (the store refuses the write) still
 * gives the report to whoever ran it: printed with --json, named as not written in the summary,
 * with status "failed" and exit code 1, so a scheduler sees that the run's record is missing. The exported
 * windows themselves are committed and the next run, with the store writable again, has nothing
 * left to export and writes its report.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';
import type { RunReport } from '../../src/run/report.js';

const ALICE = '0x344940aef33a4e9915b793dfe282f3727eff9869';
const tmp = useTempDir('report-not-written-');

function writeJob(dest: string): string {
  const file = join(tmp.dir, 'job.yaml');
  writeFileSync(
    file,
    [
      'name: report-test',
      'source:',
      '  base_url: sandbox',
      '  chains: [1]',
      'targets:',
      `  - wallet: "${ALICE}"`,
      '    datasets: [transactions]',
      'range:',
      '  from: "2024-02-01"',
      '  to: "2024-02-03"',
      '  chunk: 1d',
      'output:',
      '  format: ndjson',
      `  destination: ${dest}`,
      '',
    ].join('\n'),
  );
  return file;
}

describe('a run report the destination refuses', () => {
  it('is printed, named as not written, and the run exits 1; the next run writes its report', async () => {
    const dest = join(tmp.dir, 'out');
    const job = writeJob(dest);
    // A plain file where the reports folder must be: every report write fails, nothing else does.
    mkdirSync(join(dest, '_state', 'report-test'), { recursive: true });
    writeFileSync(join(dest, '_state', 'report-test', 'reports'), 'not a folder');

    const failed = await runCli(['run', job, '--json']);
    expect(failed.code).toBe(1);
    const report = JSON.parse(failed.stdout) as RunReport;
    // Every window is exported; only the run's record is missing, and that fails the run.
    expect(report.status).toBe('failed');
    expect(report.windows.done).toBe(2);
    expect(report.failed).toEqual([]);
    expect(report.rows).toBeGreaterThan(0);
    expect(report.report_key).toBeUndefined();
    expect(report.report_error).toMatch(/report-test\/reports/);

    const summary = await runCli(['run', job]);
    expect(summary.code).toBe(1);
    expect(summary.stdout).toMatch(/report: NOT WRITTEN to the destination/);

    rmSync(join(dest, '_state', 'report-test', 'reports'));
    const next = await runCli(['run', job, '--json']);
    expect(next.code).toBe(0);
    const nextReport = JSON.parse(next.stdout) as RunReport;
    expect(nextReport.units_skipped).toBe(nextReport.units_total);
    expect(nextReport.rows).toBe(0);
    expect(nextReport.report_error).toBeUndefined();
    expect(existsSync(join(dest, nextReport.report_key!))).toBe(true);
    expect(readdirSync(join(dest, '_state', 'report-test', 'reports'))).toHaveLength(1);
  });
});
