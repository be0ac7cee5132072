/**
 * `insight-export verify`: exit 0 on a complete export (local Parquet, local NDJSON, S3), and after
 * each kind of damage exit 1 naming exactly what is wrong: missing windows (by unit and window),
 * missing files, files whose size or row count differs from the record, overlapping windows,
 * files no window lists, unfinished commits, and a unit that lags behind its chain on `to: latest`.
 */
import { copyFile, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { windowKey } from '../../src/plan/index.js';
import { formatInterval } from '../../src/plan/format-interval.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { exportJob } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { s3TestEnv, useTestBucket } from '../helpers/s3.js';
import { completedWindows, unfoldCompletedWindows } from '../helpers/completed-windows.js';
import { runCli, writeJob, useTestCli } from './harness.js';

const sandbox = useSandbox({});
const bucket = useTestBucket('verify');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const work = useTestCli('verify-');

function job(format: 'parquet' | 'ndjson', destination: string) {
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  return {
    name: 'proof',
    source: { base_url: sandbox.url, chains: [1, 8453] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { contract: susd, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '12h' },
    output: { format, destination },
  };
}

async function verify(
  jobFile: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; report: VerifyReport; text: string }> {
  const [json, text] = await Promise.all([
    runCli(work.cli, ['verify', jobFile, '--json', '--log-level', 'error'], { env }),
    runCli(work.cli, ['verify', jobFile, '--log-level', 'error'], { env }),
  ]);
  expect(json.stderr).toBe('');
  expect(text.code).toBe(json.code);
  return { code: json.code, report: JSON.parse(json.stdout) as VerifyReport, text: text.stdout };
}

/** The job's completed windows, one marker each (damage is planted window by window). */
const markers = (out: string) => unfoldCompletedWindows(out, 'proof');

describe.each(['parquet', 'ndjson'] as const)('%s export in a local directory', (format) => {
  it('complete: exit 0; each kind of damage: exit 1 naming it exactly', { timeout: 120_000 }, async () => {
    const base = join(work.dir, format);
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(format, out));
    const report = await exportJob({ job: job(format, out), dir: base, jobFileName: 'run.yaml', destination: out });
    expect(report.status).toBe('succeeded');

    const ok = await verify(jobFile);
    expect(ok.code).toBe(0);
    expect(ok.report.ok).toBe(true);
    expect(ok.report.windows).toEqual({
      planned: report.windows.planned,
      completed: report.windows.planned,
      damaged: 0,
      missing: 0,
      pending: 0,
    });
    expect(ok.report.rows).toEqual({ recorded: report.rows, counted: report.rows, distinct: report.rows });
    expect(ok.text).toMatch(/^complete: job proof/);

    const all = await markers(out);
    const withFiles = all.filter((m) => m.record.files.length > 0);
    const [gone, broken, shrunk, lost] = [withFiles[0]!, withFiles[1]!, withFiles[2]!, withFiles[3]!];

    // 1. A window's marker deleted: its window is missing and its file is listed by nothing.
    await unlink(join(out, gone.key));
    // 2. A file deleted.
    await unlink(join(out, lost.record.files[0]!.key));
    // 3. A file replaced by another window's file (other size, other row count).
    await copyFile(join(out, shrunk.record.files[0]!.key), join(out, broken.record.files[0]!.key));
    // 4. An overlapping marker (half of a completed window, recorded again).
    const over =
      all.find((m) => m !== gone && m.record.files.length === 0) ??
      all.find((m) => m !== gone && m !== broken && m !== shrunk && m !== lost)!;
    const mid = over.record.start + (over.record.end - over.record.start) / 2;
    const overKey = over.key.replace(windowKey(over.record), windowKey({ start: over.record.start, end: mid }));
    await writeFile(join(out, overKey), JSON.stringify({ ...over.record, end: mid, files: [], rows: 0 }));
    // 5. A pending commit with an uploaded file (what a crash between upload and marker leaves).
    const stray =
      over.record.files[0]?.key.replace(/__\d{4}(\.[a-z.]+)$/, '__0099$1') ??
      `transactions/stray/${sandbox.data.wallet('alice.eth')!.address}__x__0099.ndjson.gz`;
    await copyFile(join(out, shrunk.record.files[0]!.key), join(out, stray));
    const pendingKey = over.key.replace('/completed/', '/pending/');
    await mkdir(dirname(join(out, pendingKey)), { recursive: true });
    await writeFile(join(out, pendingKey), JSON.stringify({ keys: [stray], run_id: 'crashed' }));

    const bad = await verify(jobFile);
    expect(bad.code).toBe(1);
    expect(bad.report.ok).toBe(false);
    const got = bad.report.problems.map((p) =>
      `${p.kind} ${p.unit ?? ''} ${p.window ? windowKey({ start: p.window[0], end: p.window[1] }) : ''} ${p.windows ? JSON.stringify(p.windows) : ''} ${p.key ?? ''}`
        .replace(/\s+/g, ' ')
        .trim(),
    );
    const want = [
      `missing-windows ${gone.record.unit_key} ${JSON.stringify([[gone.record.start, gone.record.end]])}`,
      `unreferenced-file ${gone.record.files[0]!.key}`,
      `missing-file ${lost.record.unit_key} ${windowKey(lost.record)} ${lost.record.files[0]!.key}`,
      `size-mismatch ${broken.record.unit_key} ${windowKey(broken.record)} ${broken.record.files[0]!.key}`,
      `row-count-mismatch ${broken.record.unit_key} ${windowKey(broken.record)} ${broken.record.files[0]!.key}`,
      `overlap ${over.record.unit_key} ${windowKey({ start: over.record.start, end: mid })}`,
      `pending-commit ${over.record.unit_key} ${pendingKey}`,
      `unreferenced-file ${stray}`,
    ];
    expect(new Set(got)).toEqual(new Set(want));
    expect(got).toHaveLength(want.length);
    // The text names the same things.
    expect(bad.text).toMatch(/^NOT complete: job proof/);
    expect(bad.text).toContain(`MISSING-WINDOWS ${gone.record.unit_key}`);
    // Time windows in ISO dates, as run and plan print them; never unix seconds.
    expect(bad.text).toContain(`window(s) missing: ${formatInterval('time', gone.record)}`);
    expect(bad.text).toContain(`file listed by window ${formatInterval('time', lost.record)} is missing`);
    expect(bad.text).toMatch(/completed windows \[\d{4}-\d\d-\d\dT[^\]]+\) and \[\d{4}-/);
    expect(bad.text).not.toMatch(/\[\d{9,}, \d{9,}\)/);
    expect(bad.text).toContain(`ROW-COUNT-MISMATCH ${broken.record.unit_key}`);
    console.log(
      `[verify] ${format}: complete export verified (${ok.report.rows.counted} rows counted in ${ok.report.files.checked_rows} files); ${want.length} planted problems all named, nothing else:\n${bad.text}`,
    );
  });
});

it('S3: a complete export verifies (row counts read through the store); a deleted object is named', { timeout: 120_000 }, async () => {
  const base = join(work.dir, 's3');
  const destination = `s3://${bucket.bucket}/proof`;
  const env = await s3TestEnv();
  const jobFile = await writeJob(base, job('parquet', destination));
  const run = await runCli(work.cli, ['run', jobFile, '--log-level', 'error'], { env });
  expect(run.code, run.stderr).toBe(0);
  const ok = await verify(jobFile, env);
  expect(ok.code).toBe(0);
  expect(ok.report.rows.counted).toBe(ok.report.rows.recorded);
  const store = bucket.store('proof');
  const victim = (await completedWindows(store, 'proof')).find((m) => m.record.files.length > 0)!;
  await store.delete(victim.record.files[0]!.key);
  const bad = await verify(jobFile, env);
  expect(bad.code).toBe(1);
  expect(bad.report.problems.map((p) => [p.kind, p.key])).toEqual([['missing-file', victim.record.files[0]!.key]]);
  console.log(`[verify] S3: ${ok.report.rows.counted} rows counted in ${ok.report.files.checked_rows} objects; deleted object named`);
});

it('to: latest: a unit behind the other units of its chain shows its missing windows', { timeout: 120_000 }, async () => {
  const base = join(work.dir, 'latest');
  const out = join(base, 'out');
  const chain = sandbox.data.chain(1)!;
  const spec = {
    name: 'proof',
    source: { base_url: sandbox.url, chains: [1] },
    targets: [
      { wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] },
      { wallet: sandbox.data.wallet('bob.eth')!.address, datasets: ['transactions'] },
    ],
    range: { by: 'block', from: chain.firstBlock, to: 'latest', safety_lag: 5, chunk: 5000 },
    output: { format: 'ndjson', destination: out },
  };
  const jobFile = await writeJob(base, spec);
  const report = await exportJob({ job: spec, dir: base, jobFileName: 'run.yaml', destination: out });
  expect(report.status).toBe('succeeded');
  expect((await verify(jobFile)).code).toBe(0);
  // bob's newest window is lost (its marker deleted): alice's frontier still says how far the chain got.
  const bob = (await markers(out))
    .filter((m) => m.record.unit_key.includes(sandbox.data.wallet('bob.eth')!.address))
    .sort((a, b) => b.record.end - a.record.end)[0]!;
  await unlink(join(out, bob.key));
  for (const f of bob.record.files) await unlink(join(out, f.key));
  const bad = await verify(jobFile);
  expect(bad.code).toBe(1);
  expect(bad.report.problems.map((p) => [p.kind, p.unit, p.windows])).toEqual([
    ['missing-windows', bob.record.unit_key, [[bob.record.start, bob.record.end]]],
  ]);
});
