/**
 * A data file whose content changed at the same size (one value edited in place, as a hand edit or
 * bit rot would): its size, row count and item_ids still match the state, so `verify` (sizes and
 * row counts, which it says) passes. `verify --content` reads every file, compares its SHA-256 with
 * the one recorded when it was written, exits 1 naming the file and its window with the repair;
 * `run --repair` hashes the files it checks and exports the window again: every file is then byte
 * for byte that of a fresh export. For uncompressed NDJSON, and Parquet (uncompressed, so the edit
 * leaves a readable file) by DuckDB and by hyparquet-writer.
 *
 * A destination written before checksums (records without `sha256`) is still verified, resumed
 * and repaired: `verify --content` says its files have no checksum recorded, and passes.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { VerifyReport } from '../../src/state/verify.js';
import { runCli } from '../helpers/cli-in-process.js';
import { completedWindows, unfoldCompletedWindows } from '../helpers/completed-windows.js';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('content-');

type Output = { format: 'ndjson' | 'parquet'; compression: 'none'; parquet_engine?: 'duckdb' | 'hyparquet' };

function job(name: string, output: Output, destination: string) {
  return {
    name,
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
    output: { ...output, destination },
  };
}

async function verify(jobFile: string, ...flags: string[]) {
  const args = ['verify', jobFile, '--log-level', 'error', ...flags];
  const [json, text] = [await runCli([...args, '--json']), await runCli(args)];
  expect(text.code).toBe(json.code);
  return { code: json.code, report: JSON.parse(json.stdout) as VerifyReport, text: text.stdout };
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

/**
 * Changes one hex digit of a block hash the file holds, everywhere it is written in the file, at the
 * same size: not the first nor the last of the file's block hashes (a Parquet footer's statistics
 * hold those), so the file still reads with the same rows and item_ids.
 */
function editBlockHash(path: string): string {
  const bytes = readFileSync(path);
  const hashes = [...new Set(bytes.toString('latin1').match(/0x[0-9a-f]{64}/g) ?? [])].sort();
  const from = hashes[Math.floor(hashes.length / 2)]!;
  expect(hashes.length).toBeGreaterThan(2);
  const to = `${from.slice(0, -1)}${from.endsWith('0') ? '1' : '0'}`;
  const edited = Buffer.from(bytes.toString('latin1').replaceAll(from, to), 'latin1');
  expect(edited.length).toBe(bytes.length);
  writeFileSync(path, edited);
  return from;
}

const outputs: [string, Output][] = [
  ['NDJSON', { format: 'ndjson', compression: 'none' }],
  ['Parquet (DuckDB)', { format: 'parquet', compression: 'none' }],
  ['Parquet (hyparquet)', { format: 'parquet', compression: 'none', parquet_engine: 'hyparquet' }],
];

describe.each(outputs)('%s file edited at the same size', (label, output) => {
  it(
    'verify says it compared sizes; verify --content finds the file and its window; run --repair restores it byte for byte',
    {
      timeout: 120_000,
    },
    async () => {
      const name = `edited-${label.replace(/\W+/g, '-').toLowerCase()}`;
      const dir = join(tmp.dir, name);
      const out = join(dir, 'out');
      const jobFile = await writeJob(dir, job(name, output, out));
      expect((await runCli(['run', jobFile, '--log-level', 'error'])).code).toBe(0);

      const fresh = join(tmp.dir, `${name}-fresh`);
      const freshJob = await writeJob(fresh, job(name, output, join(fresh, 'out')));
      expect((await runCli(['run', freshJob, '--log-level', 'error'])).code).toBe(0);
      expect(dataFiles(out)).toEqual(dataFiles(join(fresh, 'out')));

      const windows = await completedWindows(out, name);
      const hit = windows.find((w) => w.record.files.some((f) => f.rows > 3))!;
      const file = hit.record.files.find((f) => f.rows > 3)!;
      expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
      editBlockHash(join(out, file.key));

      const cheap = await verify(jobFile);
      expect(cheap.code, cheap.text).toBe(0);
      expect(cheap.report.content).toEqual({ compared_by: 'size', hashed: 0, equal: 0, differ: 0, no_checksum: 0 });
      expect(cheap.text).toContain('contents: compared by size only (--content reads every file and compares its SHA-256)');

      const found = await verify(jobFile, '--content');
      expect(found.code).toBe(1);
      const files = dataFiles(out).size;
      expect(found.report.content).toEqual({ compared_by: 'sha256', hashed: files, equal: files - 1, differ: 1, no_checksum: 0 });
      expect(found.report.problems.map((p) => [p.kind, p.unit, p.window, p.key])).toEqual([
        ['content-mismatch', hit.record.unit_key, [hit.record.start, hit.record.end], file.key],
      ]);
      expect(found.report.windows.damaged).toBe(1);
      const line = found.text.split('\n').find((l) => l.includes('CONTENT-MISMATCH'))!;
      expect(line).toContain(`${hit.record.unit_key} [`);
      expect(line).toContain(file.key);
      expect(line).toContain(`the window records ${file.sha256}`);
      expect(line).toContain(`; repair: insight-export run ${jobFile} --repair --from `);
      expect(found.text).toContain(`contents: ${files} files read and hashed (SHA-256): ${files - 1} equal, 1 differ`);
      // --quick --content: the hash alone, no row counting.
      const quick = await verify(jobFile, '--content', '--quick');
      expect(quick.code).toBe(1);
      expect(quick.report.problems.map((p) => p.kind)).toEqual(['content-mismatch']);

      const repaired = await runCli(['run', jobFile, '--repair', '--log-level', 'error']);
      expect(repaired.code, repaired.stderr).toBe(0);
      expect((await verify(jobFile, '--content')).code).toBe(0);
      expect(dataFiles(out)).toEqual(dataFiles(join(fresh, 'out')));
    },
  );
});

it(
  'a destination written before checksums: verify --content says none is recorded and passes; run and repair go on',
  { timeout: 120_000 },
  async () => {
    const name = 'older';
    const dir = join(tmp.dir, name);
    const out = join(dir, 'out');
    const spec = job(name, { format: 'ndjson', compression: 'none' }, out);
    const jobFile = await writeJob(dir, { ...spec, range: { ...spec.range, to: '2024-02-03' } });
    expect((await runCli(['run', jobFile, '--log-level', 'error'])).code).toBe(0);
    // The records as an older version wrote them: no sha256.
    const older = await unfoldCompletedWindows(out, name);
    for (const w of older) {
      const record = { ...w.record, files: w.record.files.map(({ key, rows, bytes }) => ({ key, rows, bytes })) };
      writeFileSync(join(out, w.key), JSON.stringify(record));
    }
    const res = await verify(jobFile, '--content');
    expect(res.code, res.text).toBe(0);
    const files = dataFiles(out).size;
    expect(res.report.content).toEqual({ compared_by: 'sha256', hashed: 0, equal: 0, differ: 0, no_checksum: files });
    expect(res.text).toContain(`${files} with no checksum recorded (written by an older version: not compared)`);
    // Resumed: the next run extends the range; its new windows carry checksums, the old ones are repaired by size as before.
    const extended = await writeJob(dir, spec, 'job.yaml');
    expect((await runCli(['run', extended, '--log-level', 'error'])).code).toBe(0);
    expect((await runCli(['run', extended, '--repair', '--log-level', 'error'])).code).toBe(0);
    const after = await verify(extended, '--content');
    expect(after.code, after.text).toBe(0);
    expect(after.report.content.no_checksum).toBe(files);
    expect(after.report.content.hashed).toBe(dataFiles(out).size - files);
  },
);
