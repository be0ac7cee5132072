/**
 * `run --workers N`: each worker gets the parent's command line for its own job file, its own
 * shard (k*N+i of K*N inside a pod that is shard k of K), one worker of its own, a JSON report,
 * its share of the request budget and its parent's run id (the parent commits the Iceberg tables); the merged exit code and status are the most severe of
 * the workers'.
 */
import { describe, expect, it } from 'vitest';
import { workerArgv, workerShards } from '../../src/commands/workers.js';
import { mergeWorkerReports, type WorkerOutcome } from '../../src/run/merge-reports.js';

describe('the workers of a run', () => {
  it('are shards 0..N-1 of N, or k*N+i of K*N inside shard k of K', () => {
    expect(workerShards(4, null)).toEqual([0, 1, 2, 3].map((index) => ({ index, count: 4 })));
    expect(workerShards(2, { index: 1, count: 3 })).toEqual([
      { index: 2, count: 6 },
      { index: 3, count: 6 },
    ]);
  });

  it("get the parent's flags for their own job file, with their shard, one worker, JSON and their budget", () => {
    const argv = ['run', 'a.yaml', 'b.yaml', '--workers', '3', '--json', '--requests-per-second=9', '--shard', '1/2', '--force'];
    expect(workerArgv(argv, 'a.yaml', ['b.yaml'], { index: 2, count: 4 }, 3, 'parent-run')).toEqual([
      'run',
      'a.yaml',
      '--force',
      '--shard',
      '2/4',
      '--workers',
      '1',
      '--json',
      '--requests-per-second',
      '3',
      '--worker-of',
      'parent-run',
    ]);
    expect(
      workerArgv(['run', 'b.yaml', '--workers=2', '--worker-of', 'older'], 'b.yaml', ['a.yaml'], { index: 0, count: 2 }, null, 'p'),
    ).toEqual(['run', 'b.yaml', '--shard', '0/2', '--workers', '1', '--json', '--worker-of', 'p']);
  });

  it("merge into one exit code and status: the most severe of the workers'", () => {
    const outcome = (exit_code: number): WorkerOutcome => ({ index: 0, shard: '0/1', exit_code, report: null, error: 'x' });
    const merged = (codes: number[]) =>
      mergeWorkerReports({
        job: 'j',
        runId: 'r',
        started: Date.now(),
        destination: '',
        unitsTotal: 1,
        shard: null,
        workers: codes.map(outcome),
      });
    expect([merged([0, 0]).exitCode, merged([0, 0]).report.status]).toEqual([0, 'succeeded']);
    expect([merged([0, 1]).exitCode, merged([0, 1]).report.status]).toEqual([1, 'failed']);
    expect([merged([1, 2, 75]).exitCode, merged([1, 2, 75]).report.status]).toEqual([2, 'failed']);
    expect([merged([0, 2, 130]).exitCode, merged([0, 2, 130]).report.status]).toEqual([130, 'interrupted']);
  });
});
