/**
 * Issue 14.9: the run report did not list the files written. A data engineer loading a warehouse
 * needs each new file's key, rows and bytes (and its window): the JSON report lists them, the
 * summary names the first few; a huge run lists FILES_LISTED and counts the rest.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { Plan } from '../../src/plan/index.js';
import { buildReport, FILES_LISTED } from '../../src/run/report.js';
import type { WindowOutcome } from '../../src/run/export-windows.js';
import type { InsightClient } from '../../src/source/client.js';
import type { Job } from '../../src/job/schema.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useTempDir } from '../helpers/temp-dir.js';

const tmp = useTempDir('run-report-files-');

it('the JSON report lists every file written (key, rows, bytes, unit, window) and they are the files at the destination', async () => {
  const dest = join(tmp.dir, 'out');
  const job = join(tmp.dir, 'job.yaml');
  writeFileSync(
    job,
    [
      'name: files-listed',
      'source:',
      '  base_url: sandbox',
      '  chains: [1]',
      'targets:',
      '  - wallet: "0x344940aef33a4e9915b793dfe282f3727eff9869"',
      '    datasets: [transactions]',
      'range:',
      '  from: "2024-02-01"',
      '  to: "2024-02-03"',
      '  chunk: 1d',
      'output:',
      `  destination: ${dest}`,
      '  format: ndjson',
      '',
    ].join('\n'),
  );
  const res = await runCli(['run', job, '--json', '--max-rows-per-file', '100', '--log-level', 'silent']);
  expect(res.code).toBe(0);
  const report = JSON.parse(res.stdout) as {
    rows: number;
    files: number;
    bytes: number;
    files_written: { key: string; rows: number; bytes: number; unit: string; window: [number, number] }[];
    files_written_omitted?: number;
  };
  expect(report.files).toBeGreaterThan(2);
  expect(report.files_written).toHaveLength(report.files);
  expect(report.files_written_omitted).toBeUndefined();
  expect(report.files_written.reduce((n, f) => n + f.rows, 0)).toBe(report.rows);
  for (const f of report.files_written) {
    expect(statSync(join(dest, f.key)).size).toBe(f.bytes);
    expect(f.unit).toMatch(/^transactions\//);
    expect(f.window[1]).toBeGreaterThan(f.window[0]);
  }
  // The same list is in the report written beside the state.
  const stored = JSON.parse(readFileSync(join(dest, '_state', 'files-listed', 'last-run.json'), 'utf8'));
  expect(stored.files_written).toEqual(report.files_written);

  const human = await runCli(['run', job, '--force', '--max-rows-per-file', '100', '--log-level', 'silent']);
  expect(human.code).toBe(0);
  expect(human.stdout).toContain(`    ${report.files_written[0]!.key}  ${report.files_written[0]!.rows}  `);
}, 120_000);

it(`a run of more than ${FILES_LISTED} files lists ${FILES_LISTED} and counts the others`, () => {
  const outcomes: WindowOutcome[] = Array.from({ length: 300 }, (_, i) => ({
    unitKey: 'events/x/1/block',
    start: i * 10,
    end: i * 10 + 10,
    chainId: 1,
    status: 'done',
    rows: 4,
    files: 4,
    bytes: 40,
    written: Array.from({ length: 4 }, (_, j) => ({ key: `events/f${i}_${j}.parquet`, rows: 1, bytes: 10 })),
  }));
  const plan = { jobName: 'big', axis: 'block', heads: {}, clamped: [], units: [], coverage: [] } as Plan;
  const report = buildReport({
    job: { name: 'big' } as Job,
    runId: 'r',
    started: Date.now(),
    plan,
    outcomes: outcomes.reverse(),
    destination: '/d',
    client: { stats: { requests: 0, retries: 0, status429: 0, byChain: new Map() } } as unknown as InsightClient,
    interrupted: false,
  });
  expect(report.files_written).toHaveLength(FILES_LISTED);
  expect(report.files_written_omitted).toBe(1200 - FILES_LISTED);
  // In window order, whatever order the windows finished in.
  expect(report.files_written![0]).toEqual({ key: 'events/f0_0.parquet', rows: 1, bytes: 10, unit: 'events/x/1/block', window: [0, 10] });
});
