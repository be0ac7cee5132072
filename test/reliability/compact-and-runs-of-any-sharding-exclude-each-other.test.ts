/**
 * Issue 42, item 5 (case 6 of its Why): `compact` and the runs of a job exclude each other whatever
 * the sharding (src/state/job-lease.ts). `run --workers 4 --rewind 1d`, and two `run --shard i/2
 * --rewind 1d` processes, each way round with `compact --older-than 0s` on the same destination:
 * what started first is held at its first state write (the crash points' holds: a run's or shard's
 * first window commit, compact's first merge) while the other starts; the other exits 75 naming
 * the holder (who, where, since when, until when), and a refused run leaves every object but the
 * leases as it was; once let go, the first ends with exit 0. Afterwards every data file at the destination,
 * whatever the state names, holds exactly the rows of a fresh export, each once, and `verify` finds
 * every window intact and no file the state does not name.
 */
import { createHash } from 'node:crypto';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, expect, it } from 'vitest';
import type { VerifyReport } from '../../src/state/verify.js';
import { listFiles } from '../helpers/export.js';
import { heldRun } from '../helpers/held-cli.js';
import { useSandbox } from '../helpers/sandbox.js';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { aliceTransactionsJob, runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('compact-runs-');

// Windows of 6 hours, one file each: compact has windows to merge, and each shard or worker has
// windows of the rewound day to export again.
const job = (destination: string) => ({
  ...aliceTransactionsJob(sandbox, 'exclusive', '6h', destination),
  output: { format: 'ndjson', destination, batch_windows: 'off' },
});

const BUSY = /of this job is in progress \(run \S+ on \S+:\d+\); nothing was written/;
const HELD_FOR = /held until \S+Z \(since \S+Z, renewed at \S+Z\)/;

let fresh: string;
let freshRows: string[];

beforeAll(async () => {
  fresh = join(work.dir, 'fresh', 'out');
  const r = await runCliInProcess(['run', await writeJob(join(work.dir, 'fresh'), job(fresh)), '--log-level', 'warn']);
  expect(r.code, r.stderr).toBe(0);
  freshRows = dataRows(fresh);
  expect(freshRows.length).toBeGreaterThan(100);
}, 120_000);

/** Every row of every data file under `root` (state excluded), as its JSON line, sorted. */
function dataRows(root: string): string[] {
  const rows: string[] = [];
  for (const rel of listFiles(root)) {
    if (rel.startsWith('_state/') || rel.startsWith('.insight-export-tmp/')) continue;
    const bytes = readFileSync(join(root, rel));
    for (const line of (rel.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8').split('\n')) if (line !== '') rows.push(line);
  }
  return rows.sort();
}

/** Every object but the leases, with its digest: what a refused command must leave as it was. */
function contents(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const rel of listFiles(root))
    if (!/^_state\/[^/]+\/lease[^/]*\.json$/.test(rel))
      out.set(
        rel,
        createHash('sha256')
          .update(readFileSync(join(root, rel)))
          .digest('hex'),
      );
  return out;
}

/** A copy of the fresh export in a folder of its own, and its job file. */
async function copyOfFresh(name: string): Promise<{ dir: string; out: string; jobFile: string }> {
  const dir = join(work.dir, name);
  const out = join(dir, 'out');
  cpSync(fresh, out, { recursive: true });
  return { dir, out, jobFile: await writeJob(dir, job(out)) };
}

const compact = (jobFile: string) => ['compact', jobFile, '--older-than', '0s', '--log-level', 'warn'];
const rewind = (jobFile: string, ...how: string[]) => ['run', jobFile, '--rewind', '1d', ...how, '--log-level', 'warn'];

/**
 * A command this process runs (what is checked is its refusal: exit code and message), capturing
 * its log lines as a child's stderr would hold them. The holders stay child processes (held at
 * their crash points), and so does `run --workers`, which spawns the built CLI.
 */
const refusedInProcess = (argv: string[]) => runCliInProcess(argv, { logs: true });

function expectBusy(r: { code: number | null; stderr: string }, holder: RegExp): void {
  expect(r.code, r.stderr).toBe(75);
  expect(r.stderr).toMatch(BUSY);
  expect(r.stderr).toMatch(holder);
  expect(r.stderr).toMatch(HELD_FOR);
}

async function expectAFreshExport(s: { out: string; jobFile: string }): Promise<void> {
  const rows = dataRows(s.out);
  expect(rows.length - new Set(rows).size, 'rows written twice').toBe(0);
  expect(rows).toEqual(freshRows);
  const v = await runCliInProcess(['verify', s.jobFile, '--json', '--log-level', 'warn']);
  const report = JSON.parse(v.stdout) as VerifyReport;
  expect(report.problems).toEqual([]);
  expect(report.files.unreferenced).toBe(0);
  expect(report.windows.damaged).toBe(0);
  expect(v.code).toBe(0);
}

it('run --workers 4 --rewind first: compact exits 75 naming the run or a worker; the run ends exact', { timeout: 240_000 }, async () => {
  const s = await copyOfFresh('workers-then-compact');
  const run = heldRun(work.cli, rewind(s.jobFile, '--workers', '4'), join(s.dir, 'holds'), ['state:1']);
  await run.reached('state:1');
  expectBusy(await refusedInProcess(compact(s.jobFile)), /lease-shard-\d-of-[14]\.json: run --(workers 4|shard \d\/4)/);
  run.release('state:1');
  const r = await run.done;
  expect(r.code, r.stderr).toBe(0);
  await expectAFreshExport(s);
});

it(
  'compact first: run --workers 4 --rewind exits 75 naming compact, changes nothing; compact ends exact',
  { timeout: 240_000 },
  async () => {
    const s = await copyOfFresh('compact-then-workers');
    const merging = heldRun(work.cli, compact(s.jobFile), join(s.dir, 'holds'), ['state:1']);
    await merging.reached('state:1');
    const before = contents(s.out);
    expectBusy(await runCli(work.cli, rewind(s.jobFile, '--workers', '4')), /`compact` of this job[^]*lease\.json: compact, held until/);
    expect(contents(s.out)).toEqual(before);
    merging.release('state:1');
    const r = await merging.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/windows \d+ -> \d+, files (\d+) -> (?!\1)\d+/); // it merged something
    await expectAFreshExport(s);
  },
);

it('shards --shard 0/2 and 1/2 first: compact exits 75 naming a shard; the shards end exact', { timeout: 240_000 }, async () => {
  const s = await copyOfFresh('shards-then-compact');
  // The rewound windows are the newest of each unit: one shard, or both, may own them.
  const holds = join(s.dir, 'holds');
  const shards = [0, 1].map((i) => heldRun(work.cli, rewind(s.jobFile, '--shard', `${i}/2`), holds, ['state:1']));
  await Promise.any(shards.map((shard) => shard.reached('state:1')));
  expectBusy(await refusedInProcess(compact(s.jobFile)), /lease-shard-[01]-of-2\.json: run --shard [01]\/2, held until/);
  shards[0]!.release('state:1'); // both wait in one folder
  for (const r of await Promise.all(shards.map((x) => x.done))) expect(r.code, r.stderr).toBe(0);
  await expectAFreshExport(s);
});

it(
  'compact first: shards --shard 0/2 and 1/2 exit 75 naming compact, change nothing; compact ends exact',
  { timeout: 240_000 },
  async () => {
    const s = await copyOfFresh('compact-then-shards');
    const merging = heldRun(work.cli, compact(s.jobFile), join(s.dir, 'holds'), ['state:1']);
    await merging.reached('state:1');
    const before = contents(s.out);
    const refused = [];
    for (const i of [0, 1]) refused.push(await refusedInProcess(rewind(s.jobFile, '--shard', `${i}/2`)));
    for (const r of refused) expectBusy(r, /`compact` of this job[^]*lease\.json: compact, held until/);
    expect(contents(s.out)).toEqual(before);
    merging.release('state:1');
    expect((await merging.done).code).toBe(0);
    await expectAFreshExport(s);
  },
);
