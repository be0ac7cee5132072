/**
 * Issue 14.9: `run --from/--to` exports a range without editing the job. The points are checked
 * like the job file's range (a bad one exits 2 naming the flag); windows already exported are
 * skipped, and `--force` exports the given range again.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { RunReport } from '../../src/run/report.js';
import { listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('from-to-');

async function setUp(name: string): Promise<{ file: string; out: string }> {
  const dir = join(tmp.dir, name);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'job.yaml');
  const job = {
    name,
    source: { base_url: 'sandbox', chains: [1] },
    targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
    range: { by: 'time', from: '2024-02-01', to: '2024-02-05', chunk: '1d' },
  };
  await writeFile(file, stringify(job));
  return { file, out: join(dir, 'out') };
}

async function run(file: string, out: string, ...more: string[]) {
  const r = await runCli(['run', file, '--base-url', sandbox.url, '--destination', out, '--log-level', 'silent', '--json', ...more]);
  return { ...r, report: r.code === 0 || r.code === 1 ? (JSON.parse(r.stdout) as RunReport) : null };
}

const dates = (out: string) =>
  [...new Set(listFiles(out).flatMap((f) => (f.startsWith('transactions/') ? [/date=([\d-]+)/.exec(f)![1]!] : [])))].sort();

describe('run --from/--to', () => {
  it("exports only the given range of the job's windows", async () => {
    const { file, out } = await setUp('part');
    const r = await run(file, out, '--from', '2024-02-02', '--to', '2024-02-04');
    expect(r.code, r.stderr).toBe(0);
    expect(r.report!.windows.planned).toBe(2);
    expect(r.report!.rows).toBeGreaterThan(0);
    expect(dates(out)).toEqual(['2024-02-02', '2024-02-03']);

    // The rest of the job's own range is still to do; what the flags exported is not done twice.
    const rest = await run(file, out);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.report!.windows.planned).toBe(2);
    expect(dates(out)).toEqual(['2024-02-01', '2024-02-02', '2024-02-03', '2024-02-04']);
  });

  it('skips windows already exported unless --force, which exports the given range again', async () => {
    const { file, out } = await setUp('again');
    expect((await run(file, out)).code).toBe(0);
    const skipped = await run(file, out, '--from', '2024-02-03', '--to', '2024-02-04');
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.report!.windows.planned).toBe(0);
    const forced = await run(file, out, '--from', '2024-02-03', '--to', '2024-02-04', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.report!.windows.planned).toBe(1);
    expect(forced.report!.rows).toBeGreaterThan(0);
  });

  it.each([
    [['--from', '2024-02-31'], /range\.from \(--from "2024-02-31"\).*not a real calendar date/],
    [['--from', '2024-02-04', '--to', '2024-02-02'], /range\.to \(--to "2024-02-02"\): "2024-02-02" is not after range\.from/],
    [['--to', 'tomorrow'], /range\.to \(--to "tomorrow"\)/],
  ])('%j is refused with exit 2 naming the flag, writing nothing', async (flags, message) => {
    const { file, out } = await setUp(`bad-${flags.join('').replace(/[^a-z0-9]/g, '')}`);
    const r = await run(file, out, ...flags);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(listFiles(out)).toEqual([]);
  });
});
