/**
 * Data files that no state names (a destination copied without its `_state/`, what a crash left
 * without its pending marker) are never written beside silently:
 *
 * - `_state/` lost, the data kept: the next run finds the job's files before it exports anything
 *   and refuses (exit 2, nothing written) those in the windows it would write, naming the command
 *   that removes them; `verify` names each file with that command; running it, then the run,
 *   leaves files byte for byte equal to a fresh export.
 * - a file of an overlapping window beside a window being written again (`--force`): that
 *   window's commit is refused (exit 2 in the report, naming the file); `run --repair` names it
 *   with the removal command (report and log); once removed, exact.
 *
 * The export was made in two runs (the second day in two halves), so a fresh run cuts the same day
 * into one batch with other file names: written beside the old halves, each row would be there twice.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { runCli } from '../helpers/cli-in-process.js';
import { completedWindows } from '../helpers/completed-windows.js';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('unreferenced-');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

function job(name: string, destination: string) {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  return {
    name,
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: susd, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '6h' },
    output: { format: 'ndjson', destination },
  };
}

/** Every data file of a local export with its SHA-256. */
function dataFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of listFiles(root).sort()) {
    if (rel.startsWith('_state/') || rel.startsWith('.insight-export-tmp/')) continue;
    out.set(
      rel,
      createHash('sha256')
        .update(readFileSync(join(root, rel)))
        .digest('hex'),
    );
  }
  return out;
}

async function run(jobFile: string, ...flags: string[]) {
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error', ...flags]);
  return { ...r, report: r.stdout.trim() === '' ? null : (JSON.parse(r.stdout) as RunReport) };
}

/** A job exported in two runs: the second day in two halves (other batches, other file names than one run makes). */
async function exportInTwoRuns(name: string): Promise<{ jobFile: string; out: string; fresh: Map<string, string> }> {
  const dir = join(tmp.dir, name);
  const out = join(dir, 'out');
  const jobFile = await writeJob(dir, job(name, out));
  expect((await run(jobFile, '--to', '2024-02-02T12:00:00Z')).code).toBe(0);
  expect((await run(jobFile)).code).toBe(0);
  const freshDir = join(tmp.dir, `${name}-fresh`);
  const freshJob = await writeJob(freshDir, job(name, join(freshDir, 'out')));
  expect((await run(freshJob)).code).toBe(0);
  const fresh = dataFiles(join(freshDir, 'out'));
  // The halves are files a single run never writes.
  expect([...dataFiles(out).keys()].filter((k) => !fresh.has(k)).length).toBeGreaterThan(0);
  return { jobFile, out, fresh };
}

describe('files that no state names', () => {
  it(
    '_state/ lost: the next run refuses and says so, verify names them with the removal command, which makes the run exact',
    {
      timeout: 180_000,
    },
    async () => {
      const { jobFile, out, fresh } = await exportInTwoRuns('lost');
      const before = dataFiles(out);
      await rm(join(out, '_state'), { recursive: true, force: true });

      const refused = await run(jobFile);
      expect(refused.code, refused.stderr).toBe(2);
      const remove = `insight-export remove-orphan-files ${jobFile}`;
      expect(refused.stderr).toMatch(
        /error: \d+ data file\(s\) that no state names lie where the windows of this run .* would be written: its rows would be there twice/,
      );
      expect(refused.stderr).toContain(remove);
      expect(refused.report!.status).toBe('failed');
      // Nothing written.
      expect(dataFiles(out)).toEqual(before);

      const verified = await runCli(['verify', jobFile, '--json', '--log-level', 'error']);
      expect(verified.code).toBe(1);
      const report = JSON.parse(verified.stdout) as VerifyReport & { remove_unreferenced?: string };
      const named = report.problems.filter((p) => p.kind === 'unreferenced-file').map((p) => p.key);
      expect(named.sort()).toEqual([...before.keys()].sort());
      expect(report.remove_unreferenced).toBe(remove);
      const text = (await runCli(['verify', jobFile, '--log-level', 'error'])).stdout;
      for (const key of before.keys()) expect(text).toContain(`UNREFERENCED-FILE ${key}: no completed window lists this file`);
      expect(text).toContain(`; remove: ${remove}`);
      expect(text).toContain(`remove every file above that no state names: ${remove}`);

      const dry = await runCli(['remove-orphan-files', jobFile, '--dry-run', '--json', '--log-level', 'error']);
      expect(dry.code, dry.stderr).toBe(0);
      expect((JSON.parse(dry.stdout) as { deleted: string[] }).deleted.sort()).toEqual([...before.keys()].sort());
      expect(dataFiles(out)).toEqual(before);
      const removed = await runCli(remove.split(' ').slice(1).concat(['--log-level', 'error']));
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stdout).toContain(
        `removed: job lost, ${before.size} of its ${before.size} data files that no completed window or pending commit names`,
      );
      expect(dataFiles(out).size).toBe(0);

      const again = await run(jobFile);
      expect(again.code, again.stderr).toBe(0);
      expect(dataFiles(out)).toEqual(fresh);
      expect((await runCli(['verify', jobFile, '--content', '--log-level', 'error'])).code).toBe(0);
    },
  );

  it(
    'a file of an overlapping window no state names: the window written again beside it is refused, the others go on',
    {
      timeout: 180_000,
    },
    async () => {
      const { jobFile, out, fresh } = await exportInTwoRuns('beside');
      // What a crash left without its pending marker: a file of the first day's second half.
      const day = (await completedWindows(out, 'beside')).find(
        (w) => w.record.unit_key.startsWith('transactions/') && w.record.files.length > 0,
      )!;
      const file = day.record.files[0]!.key;
      const mid = day.record.start + 43_200;
      const stray = file.replace(
        /__(\d+)_(\d+)__/,
        (_, start: string, end: string) => `__${String(mid).padStart(start.length, '0')}_${end}__`,
      );
      expect(stray).not.toBe(file);
      copyFileSync(join(out, file), join(out, stray));

      // run --repair names it with the command that removes it (and leaves it: nothing is damaged).
      const repair = await run(jobFile, '--repair');
      expect(repair.code, repair.stderr).toBe(0);
      expect(repair.report!.unreferenced_files).toEqual({
        files: 1,
        examples: [stray],
        remove: `insight-export remove-orphan-files ${jobFile}`,
      });

      const forced = await run(jobFile, '--force');
      expect(forced.code).toBe(2);
      const failed = forced.report!.failed;
      expect(failed.map((f) => [f.unit, f.window, f.exit_code])).toEqual([[day.record.unit_key, [day.record.start, day.record.end], 2]]);
      expect(failed[0]!.error).toContain(`1 data file(s) that no state names lie where ${day.record.unit_key} would be written`);
      expect(failed[0]!.error).toContain(stray);
      expect(failed[0]!.error).toContain(`insight-export remove-orphan-files ${jobFile}`);
      expect(forced.report!.windows.done).toBeGreaterThan(0);

      const removed = await runCli(['remove-orphan-files', jobFile, '--json', '--log-level', 'error']);
      expect(removed.code, removed.stderr).toBe(0);
      expect((JSON.parse(removed.stdout) as { deleted: string[] }).deleted).toEqual([stray]);
      expect((await run(jobFile, '--force')).code).toBe(0);
      expect(dataFiles(out)).toEqual(fresh);
    },
  );
});
