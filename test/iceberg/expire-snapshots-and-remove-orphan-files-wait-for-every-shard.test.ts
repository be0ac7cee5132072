/**
 * Issue 42, item 5: Iceberg maintenance and sharded runs exclude each other (src/state/job-lease.ts).
 * While `run --shard 1/2 --force` is held at its first window commit, `expire-snapshots` and
 * `remove-orphan-files` exit 75 naming that shard and delete nothing; once it has ended, both run.
 * The other way round, while `expire-snapshots` is held at its first table write, `run --shard 0/2`
 * and `run --shard 1/2` exit 75 naming it; it then ends, and the table reads as a fresh export.
 * The held commands run as child processes (held at a point of the test build of the CLI); the
 * others run in-process (test/helpers/cli-in-process.ts): the lease they meet is the child's, on disk.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import { LocalStore } from '../../src/store/local.js';
import { listFiles } from '../helpers/export.js';
import { heldRun } from '../helpers/held-cli.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { runCli, type CliResult } from '../helpers/cli-in-process.js';
import { aliceTransactionsJob, useTestCli, writeJob } from '../reliability/harness.js';

const sandbox = useSandbox();
const work = useTestCli('iceberg-busy-');
const TABLE = 'transactions';

let out: string;
let jobFile: string;
let fresh: string[];

beforeAll(async () => {
  out = join(work.dir, 'out');
  // Windows of 6 hours: each shard has windows of every unit to export again.
  jobFile = await writeJob(work.dir, {
    ...aliceTransactionsJob(sandbox, 'icebusy', '6h', out),
    output: { format: 'iceberg', destination: out },
  });
  const r = await cli(['run', jobFile, '--log-level', 'warn']);
  expect(r.code, r.stderr).toBe(0);
  fresh = sortedRows(await icebirdRows(new LocalStore(out), TABLE));
}, 120_000);

/** The CLI in-process, its log lines captured with what it prints. */
const cli = (args: string[]) => runCli(args, { logs: true });

function expectBusy(r: CliResult, holder: RegExp): void {
  expect(r.code, r.stderr).toBe(75);
  expect(r.stderr).toMatch(/of this job is in progress \(run \S+ on \S+:\d+\); nothing was written/);
  expect(r.stderr).toMatch(holder);
}

const maintenance = (command: string) => [command, jobFile, '--snapshot-retention', '1ms', '--log-level', 'warn'];

it('while a shard runs, expire-snapshots and remove-orphan-files exit 75 naming it and delete nothing', { timeout: 240_000 }, async () => {
  const shard = heldRun(work.cli, ['run', jobFile, '--shard', '1/2', '--force', '--log-level', 'warn'], join(work.dir, 'holds-1'), [
    'state:1',
  ]);
  await shard.reached('state:1');
  // The held shard's own temporary files (.insight-export-tmp/) come and go as its other windows
  // go on: with them in this list the check failed now and then (a run of the file before this change).
  const before = listFiles(out).filter((k) => !k.startsWith('_state/') && !k.startsWith('.insight-export-tmp/'));
  for (const command of ['expire-snapshots', 'remove-orphan-files'])
    expectBusy(await cli(maintenance(command)), /lease-shard-1-of-2\.json: run --shard 1\/2, held until/);
  expect(before.filter((k) => !existsSync(join(out, k)))).toEqual([]);
  shard.release('state:1');
  expect((await shard.done).code).toBe(0);
  // Once the shard has ended, its released lease keeps nothing out.
  for (const command of ['expire-snapshots', 'remove-orphan-files']) {
    const r = await cli(maintenance(command));
    expect(r.code, `${command}: ${r.stderr}`).toBe(0);
  }
});

it(
  'while expire-snapshots runs, shards 0/2 and 1/2 exit 75 naming it; it ends and the table reads as a fresh export',
  { timeout: 240_000 },
  async () => {
    const again = await cli(['run', jobFile, '--force', '--log-level', 'warn']);
    expect(again.code, again.stderr).toBe(0); // a snapshot to expire
    const version = (await readCurrentVersion(new LocalStore(out), TABLE))!.version;
    const expiring = heldRun(work.cli, maintenance('expire-snapshots'), join(work.dir, 'holds-2'), ['table:1']);
    await expiring.reached('table:1');
    const refused: CliResult[] = [];
    for (const i of [0, 1]) refused.push(await cli(['run', jobFile, '--shard', `${i}/2`, '--force', '--log-level', 'warn']));
    for (const r of refused) expectBusy(r, /`expire-snapshots` of this job[^]*lease\.json: expire-snapshots, held until/);
    expect((await readCurrentVersion(new LocalStore(out), TABLE))!.version).toBe(version);
    expiring.release('table:1');
    expect((await expiring.done).code).toBe(0);
    const current = (await readCurrentVersion(new LocalStore(out), TABLE))!;
    expect(current.meta.snapshots).toHaveLength(1);
    expect(sortedRows(await icebirdRows(new LocalStore(out), TABLE))).toEqual(fresh);
  },
);
