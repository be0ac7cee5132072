/**
 * Two shards of one job (`--shard 0/2` and `--shard 1/2`, each its own CLI process, started
 * together) committing the same Iceberg tables, raced both ways round by the crash points' holds
 * (test/reliability/fixtures/crash-points.ts: `table:1` is a shard's first write of a snapshot's
 * files, after it loaded the table and read the state; `state:1` its first state read):
 *
 * - round 1: shard 0 reads the state before shard 1 exports anything, and shard 1 commits first;
 *   shard 0 loses, reads the table and the state again, and takes none of the winner's files out;
 * - round 2: shard 0 reads the state before shard 1 exports its new windows and commits first;
 *   shard 1, holding the whole state, loses and commits the rest on top.
 *
 * Each loser's log says its commit was retried. The file-commit and the catalog variants share it;
 * each checks its tables (as files, or through the catalog) after each round and at the end.
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { writeJob, type CliResult, type TestCli } from '../reliability/harness.js';
import { heldRun } from './held-cli.js';

const RETRIED = 'another writer committed to the Iceberg table first';

export interface ReportedCommit {
  table: string;
  snapshot_id: number;
}

export interface TwoShardRaceOptions {
  cli: TestCli;
  /** Where the job files and the holds' folders go. */
  base: string;
  /** The round's job file content, up to `to`. */
  job(to: string): Record<string, unknown>;
  /** The end of each of the two rounds. */
  rounds: readonly [string, string];
  /** How many tables the job writes (the first round's winner commits each). */
  tables: number;
  /** The checks after each round (the tables read as a fresh export of the round). */
  afterRound(to: string): Promise<void>;
}

const report = (r: CliResult) => JSON.parse(r.stdout) as RunReport;

function shard(cli: TestCli, jobFile: string, index: number, holdDir: string, holds: string[]) {
  const run = heldRun(cli, ['run', jobFile, '--shard', `${index}/2`, '--log-level', 'warn', '--json'], holdDir, holds);
  return {
    ...run,
    /** Lets the shard go at `hold` and waits for its end (exit 0). */
    async finish(hold: string): Promise<CliResult> {
      run.release(hold);
      const r = await run.done;
      expect(r.code, `shard ${index}: ${r.stderr}`).toBe(0);
      return r;
    },
  };
}

/** Runs both rounds; returns every commit either shard reported and the last round's job file. */
export async function raceTwoShardsBothWays(o: TwoShardRaceOptions): Promise<{ commits: ReportedCommit[]; jobFile: string }> {
  const commits: ReportedCommit[] = [];
  const [first, second] = o.rounds;

  const firstJob = await writeJob(o.base, o.job(first), 'first.yaml');
  const stale = shard(o.cli, firstJob, 0, join(o.base, 'holds-1-0'), ['table:1']);
  const whole = shard(o.cli, firstJob, 1, join(o.base, 'holds-1-1'), ['state:1']);
  await stale.reached('table:1');
  const winner = await whole.finish('state:1');
  const loser = await stale.finish('table:1');
  expect(loser.stderr).toContain(RETRIED);
  expect(report(winner).iceberg_commits).toHaveLength(o.tables);
  await o.afterRound(first);
  // The loser takes none of the winner's files out (its retry finds them in the state it reads again).
  expect(report(loser).iceberg_commits!.filter((c) => c.deleted_files > 0)).toEqual([]);
  commits.push(...report(winner).iceberg_commits!, ...report(loser).iceberg_commits!);

  const jobFile = await writeJob(o.base, o.job(second));
  const partial = shard(o.cli, jobFile, 0, join(o.base, 'holds-2-0'), ['table:1']);
  const full = shard(o.cli, jobFile, 1, join(o.base, 'holds-2-1'), ['state:1', 'table:1']);
  await partial.reached('table:1');
  full.release('state:1');
  await full.reached('table:1');
  const winner2 = await partial.finish('table:1');
  const loser2 = await full.finish('table:1');
  expect(loser2.stderr).toContain(RETRIED);
  // The loser commits its windows on top of the winner's snapshot (of every table it has new windows of).
  expect(report(winner2).iceberg_commits!.length, winner2.stderr).toBeGreaterThan(0);
  expect(report(loser2).iceberg_commits!.length, loser2.stderr).toBeGreaterThan(0);
  commits.push(...report(winner2).iceberg_commits!, ...report(loser2).iceberg_commits!);
  await o.afterRound(second);
  return { commits, jobFile };
}

interface Snapshot {
  'snapshot-id': number;
  'parent-snapshot-id'?: number | null;
  'sequence-number': number;
}

/**
 * A table's history is a chain (each parent the previous, sequence numbers 1..n) ending at its
 * current snapshot, and holds every snapshot a shard reported committing to it, and no other.
 */
export function expectSnapshotChain(
  table: string,
  history: Snapshot[],
  current: number | null | undefined,
  commits: ReportedCommit[],
): void {
  expect(
    history.map((s) => s['sequence-number']),
    table,
  ).toEqual(history.map((_, i) => i + 1));
  history.forEach((s, i) => expect(s['parent-snapshot-id'], `${table} snapshot ${i + 1}`).toBe(history[i - 1]?.['snapshot-id']));
  expect(current, table).toBe(history.at(-1)!['snapshot-id']);
  expect(history.map((s) => s['snapshot-id']).sort(), table).toEqual(
    commits
      .filter((c) => c.table === table)
      .map((c) => c.snapshot_id)
      .sort(),
  );
}
