/**
 * test/fixtures/destination-before-redesign holds destinations written by the code before the
 * redesign of issue 43 (its README names the commit): the state format a later tree must keep
 * reading. A copy of each is verified complete, resumed by a run whose job ends later (only the
 * new windows are exported, the old files are left as they are), equals a fresh export of the whole
 * range row for row, and is verified complete again, all without an operator. Nothing here counts
 * windows or names files by window: the redesign may move windows to another grid, as long as it
 * reads these destinations and exports only what they lack.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tableRows, tablesAt } from '../../scripts/exports-unchanged/rows.js';
import { runCli } from '../helpers/cli-in-process.js';
import { listFiles } from '../helpers/export.js';
import { useTempDir } from '../helpers/temp-dir.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/destination-before-redesign/', import.meta.url));
const JOB = join(FIXTURE, 'job.yaml');
/** The fixture's job ends at 06:00; the resumed job six hours later. */
const LATER_TO = '2024-02-01T12:00:00Z';
/** Rows the fixture's destinations hold (each). */
const FIXTURE_ROWS = 135;

const tmp = useTempDir('before-redesign-');

/** The fixture's job file ending at LATER_TO (the user edits `to` and runs again). */
function laterJob(dir: string): string {
  const text = readFileSync(JOB, 'utf8');
  const later = text.replace(/^ {2}to: .*$/m, `  to: "${LATER_TO}"`);
  expect(later).not.toBe(text);
  const file = join(dir, 'job.yaml');
  writeFileSync(file, later);
  return file;
}

/** Data files (not state) below a destination, by path. */
function dataFiles(root: string): Map<string, Buffer> {
  return new Map(
    listFiles(root)
      .filter((f) => !/^[._]/.test(f))
      .map((f) => [f, readFileSync(join(root, f))]),
  );
}

async function cli(args: string[]): Promise<{ code: number; report: any }> {
  const { code, stdout, stderr } = await runCli([...args, '--json', '--log-level', 'silent']);
  expect(code, `insight-export ${args.join(' ')}\n${stderr}\n${stdout}`).toBe(0);
  return { code, report: JSON.parse(stdout) };
}

describe.each(['ndjson', 'parquet'] as const)('a %s destination written before the redesign', (format) => {
  it('is verified complete, resumed with only the new windows into the rows of a fresh export, and verified again', async () => {
    const dest = join(tmp.dir, format, 'destination');
    const fresh = join(tmp.dir, format, 'fresh');
    cpSync(join(FIXTURE, format), dest, { recursive: true });
    const before = dataFiles(dest);
    expect(before.size).toBe(2);

    const first = await cli(['verify', JOB, '--format', format, '--destination', dest, '--content']);
    expect(first.report.ok).toBe(true);
    expect(first.report.windows).toMatchObject({ completed: first.report.windows.planned, damaged: 0, missing: 0 });
    expect(first.report.windows.planned).toBeGreaterThan(0);
    expect(first.report.content).toMatchObject({ hashed: 2, equal: 2, differ: 0, no_checksum: 0 });
    expect(first.report.rows).toEqual({ recorded: FIXTURE_ROWS, counted: FIXTURE_ROWS, distinct: FIXTURE_ROWS });

    const job = laterJob(join(tmp.dir, format));
    const resumed = await cli(['run', job, '--format', format, '--destination', dest]);
    expect(resumed.report.windows).toMatchObject({ done: resumed.report.windows.planned, failed: 0, abandoned: 0 });
    expect(resumed.report.windows_reexported).toBe(0);
    const after = dataFiles(dest);
    for (const [file, bytes] of before) expect(after.get(file)?.equals(bytes), `${file} left as it was`).toBe(true);
    expect(after.size).toBeGreaterThan(before.size);

    const whole = await cli(['run', job, '--format', format, '--destination', fresh]);
    // Only what the fixture lacks was exported: the rows of the new six hours, none of the old.
    expect(resumed.report.rows).toBe(whole.report.rows - FIXTURE_ROWS);
    expect(resumed.report.rows).toBeGreaterThan(0);
    const tables = tablesAt(fresh);
    expect(tables.length).toBe(2);
    expect(tablesAt(dest)).toEqual(tables);
    for (const table of tables) {
      const rows = await tableRows(dest, table, format);
      expect(rows.length, table).toBeGreaterThan(0);
      expect(rows, table).toEqual(await tableRows(fresh, table, format));
    }

    const last = await cli(['verify', job, '--format', format, '--destination', dest, '--content']);
    expect(last.report.ok).toBe(true);
    expect(last.report.windows).toMatchObject({ completed: last.report.windows.planned, damaged: 0, missing: 0 });
    expect(last.report.windows.planned).toBeGreaterThan(first.report.windows.planned);
    expect(last.report.content).toMatchObject({ hashed: after.size, equal: after.size, differ: 0, no_checksum: 0 });
    expect(last.report.rows).toEqual({ recorded: whole.report.rows, counted: whole.report.rows, distinct: whole.report.rows });
  });
});
