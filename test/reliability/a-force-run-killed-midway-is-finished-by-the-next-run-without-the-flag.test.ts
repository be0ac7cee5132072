/**
 * Issue 42, item 6: a replacement that was interrupted is resumed by the next run without the
 * flag. Every file of an export is edited (one value in one row: what bit rot or a hand edit
 * does), then `run --force` is killed (SIGKILL) half-way through its commits: some windows are
 * replaced, the others still hold the edited files. The next plain run exports again the windows
 * the killed run had not replaced (it says so, and how many), the record of the replacement is
 * gone, and every file equals a fresh export's, byte for byte: the forced range was re-exported.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { aliceTransactionsJob, readNdjsonExport, runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox({ latency: { fixedMs: 2, jitterMs: 4 } });
const work = useTestCli('force-resumed-');
const flags = ['--log-level', 'warn', '--json', '--units-in-flight', '1'];

/** alice's transactions, 3 days on 3 chains in windows of 3 hours (a batch a day and chain), as plain NDJSON. */
async function jobAt(name: string): Promise<{ out: string; file: string }> {
  const out = join(work.dir, name);
  const spec = aliceTransactionsJob(sandbox, 'force-resumed', '3h', out);
  return {
    out,
    file: await writeJob(join(work.dir, `${name}-job`), { ...spec, output: { ...(spec.output as object), compression: 'none' } }),
  };
}

/** Changes one digit of the first row's nonce in every data file (same size, still valid JSON). */
function editEveryFile(out: string): string[] {
  const edited = listFiles(out).filter((k) => k.endsWith('.ndjson') && !k.startsWith('_state/'));
  for (const key of edited) {
    const path = join(out, key);
    const text = readFileSync(path, 'utf8');
    writeFileSync(
      path,
      text.replace(/"nonce":(\d)/, (_, d: string) => `"nonce":${(Number(d) + 1) % 10}`),
    );
  }
  return edited;
}

it(
  'a --force run killed half-way is finished by the next run without --force: every file equals a fresh export',
  { timeout: 300_000 },
  async () => {
    const fresh = await jobAt('fresh');
    const first = await runCli(work.cli, ['run', fresh.file, ...flags]);
    expect(first.code, first.stderr).toBe(0);
    const want = readNdjsonExport(fresh.out).files;
    const batches = (JSON.parse(first.stdout) as RunReport).files;
    expect(batches).toBe(9);

    const t = await jobAt('trial');
    expect((await runCli(work.cli, ['run', t.file, ...flags])).code).toBe(0);
    const edited = editEveryFile(t.out);
    expect(edited).toHaveLength(batches);
    const changed = () => [...readNdjsonExport(t.out).files].filter(([key, sum]) => want.get(key) !== sum).map(([key]) => key);
    expect(changed()).toHaveLength(batches);

    // Each batch's commit writes two state markers (pending, completed): killed before the fifth batch's first.
    const killed = await runCli(work.cli, ['run', t.file, ...flags, '--force'], { env: { INSIGHT_TEST_CRASH: `state:${batches}` } });
    expect(killed.signal, killed.stderr.slice(-1000)).toBe('SIGKILL');
    const notReplaced = changed();
    expect(notReplaced.length).toBeGreaterThan(0);
    expect(notReplaced.length).toBeLessThan(batches);
    const recordsMidway = await readdir(join(t.out, '_state/force-resumed/replacing')).catch(() => []);

    // `plan` shows what the next run will export: the windows not replaced yet.
    const planned = await runCli(work.cli, ['plan', t.file, '--json']);
    expect(planned.code, planned.stderr).toBe(0);
    expect((JSON.parse(planned.stdout) as { plan: { units: unknown[] } }).plan.units).toHaveLength(notReplaced.length);
    const next = await runCli(work.cli, ['run', t.file, ...flags]);
    expect(next.code, next.stderr).toBe(0);
    expect(readNdjsonExport(t.out).files).toEqual(want);
    // The replacement was recorded before it started, and the next run said what it finished.
    expect(recordsMidway).toHaveLength(1);
    expect(next.stderr).toMatch(/an interrupted replacement is finished/);
    expect((JSON.parse(next.stdout) as RunReport).windows_resumed).toBe(notReplaced.length);
    expect(await readdir(join(t.out, '_state/force-resumed/replacing')).catch(() => [])).toEqual([]);
    expect((await verifyDestination({ store: new LocalStore(t.out), job: await loadJob(t.file) })).problems).toEqual([]);

    // Nothing is left to replace: a further run exports nothing.
    const after = await runCli(work.cli, ['run', t.file, ...flags]);
    expect(after.code, after.stderr).toBe(0);
    expect((JSON.parse(after.stdout) as RunReport).windows.planned).toBe(0);
    console.log(
      `[force-resumed] a --force killed after ${batches - notReplaced.length} of ${batches} batches: the next run replaced the other ${notReplaced.length}; every file equals a fresh export`,
    );
  },
);
