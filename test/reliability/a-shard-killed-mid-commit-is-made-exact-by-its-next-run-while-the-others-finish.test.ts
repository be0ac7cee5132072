/**
 * Four shards of a one-wallet, three-chain job at once; one of them is killed (SIGKILL) in the
 * middle of a window's commit: while a data file is being put in place, or right after a state
 * marker's write. The other three finish (exit 0) untouched; the next run of the killed shard
 * alone takes its lease over, removes what its crash left, exports the rest of its windows, and
 * the destination then equals, byte for byte, one process's export of the job, with nothing pending.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { useSandbox } from '../helpers/sandbox.js';
import { listFiles } from '../helpers/export.js';
import { aliceTransactionsJob, readNdjsonExport, runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('shard-crash-');
const SHARDS = 4;
const KILLED = 2;

// Windows committed one by one: shards cut a unit's windows anywhere, and batched, each shard's part
// of a day would be a file of its own where one process writes one (compared file by file here).
const job = (destination: string) => {
  const spec = aliceTransactionsJob(sandbox, 'shard-crash', '6h', destination);
  return { ...spec, output: { ...(spec.output as object), batch_windows: 'off' } };
};

const args = (jobFile: string, shard: number) => ['run', jobFile, '--shard', `${shard}/${SHARDS}`, '--log-level', 'warn', '--json'];

let single: ReturnType<typeof readNdjsonExport>;

beforeAll(async () => {
  const out = join(work.dir, 'single', 'out');
  const r = await runCli(work.cli, ['run', await writeJob(join(work.dir, 'single'), job(out)), '--json']);
  expect(r.code, r.stderr).toBe(0);
  single = readNdjsonExport(out);
  expect(single.itemIds.length).toBeGreaterThan(1000);
}, 120_000);

for (const crash of ['upload:3', 'state-after:4']) {
  it(`a shard killed at ${crash} is exact after its next run; the other shards finish`, { timeout: 300_000 }, async () => {
    const base = join(work.dir, crash.replace(':', '-'));
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(out));
    const first = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) =>
        runCli(work.cli, args(jobFile, i), { timeoutMs: 240_000, env: i === KILLED ? { INSIGHT_TEST_CRASH: crash } : {} }),
      ),
    );
    expect(first[KILLED]!.signal, first[KILLED]!.stderr).toBe('SIGKILL');
    for (const [i, r] of first.entries()) if (i !== KILLED) expect(r.code, `shard ${i}: ${r.stderr}`).toBe(0);
    // The crash left the killed shard's windows incomplete.
    expect(readNdjsonExport(out).itemIds.length).toBeLessThan(single.itemIds.length);

    const again = await runCli(work.cli, args(jobFile, KILLED), { timeoutMs: 240_000 });
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as RunReport;
    expect(report.windows.done).toBeGreaterThan(0);

    const got = readNdjsonExport(out);
    expect([...got.files.keys()].sort()).toEqual([...single.files.keys()].sort());
    expect(got.files).toEqual(single.files);
    expect(listFiles(out).filter((k) => k.startsWith('_state/shard-crash/pending/'))).toEqual([]);
    expect(existsSync(join(out, '_state/shard-crash/shard-split-4.json'))).toBe(true);

    // Every shard again: nothing left to export.
    const round = await Promise.all(Array.from({ length: SHARDS }, (_, i) => runCli(work.cli, args(jobFile, i), { timeoutMs: 240_000 })));
    for (const r of round) {
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as RunReport).windows.planned).toBe(0);
    }
  });
}
