/**
 * SIGINT while requests are in flight to a slow service: the run does not wait for their answers
 * (up to the request timeout, 30 s by default), so it stops cleanly within the grace period, with
 * its "interrupted" report, instead of being ended by the grace timer without one.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { useSandbox } from '../helpers/sandbox.js';
import { aliceTransactionsJob, completedWindowMarkers, runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('stop-in-flight-');

it('SIGINT with requests in flight: exit 130 within seconds, with the interrupted report', { timeout: 60_000 }, async () => {
  const base = join(work.dir, 'job');
  const out = join(base, 'out');
  // Windows committed one by one: many requests are still to come once two windows are committed.
  const spec = aliceTransactionsJob(sandbox, 'stop', '3h', out);
  const jobFile = await writeJob(base, { ...spec, output: { ...(spec.output as object), batch_windows: 'off' } });
  let signalledAt = 0;
  try {
    const stopped = await runCli(
      work.cli,
      ['run', jobFile, '--log-level', 'warn', '--units-in-flight', '2', '--staging-dir', join(base, 'staging')],
      {
        timeoutMs: 50_000,
        onSpawn: (child) => {
          let slowFrom = -1;
          const poll = setInterval(() => {
            void completedWindowMarkers(out, 'stop').then((done) => {
              if (slowFrom < 0 && done >= 2) {
                // Paging is under way: from now on every answer takes longer than a stop's grace period (10 s).
                sandbox.setLatency({ fixedMs: 25_000, jitterMs: 0 });
                slowFrom = sandbox.stats().requests;
              } else if (slowFrom >= 0 && signalledAt === 0 && sandbox.stats().requests > slowFrom) {
                signalledAt = Date.now();
                child.kill('SIGINT');
              }
            });
          }, 20);
          child.on('close', () => clearInterval(poll));
        },
      },
    );
    expect(signalledAt).toBeGreaterThan(0);
    expect(stopped.code, stopped.stderr).toBe(ExitCode.interrupted);
    expect(stopped.stdout, stopped.stderr).toMatch(/^interrupted: job stop/);
    expect(stopped.stderr).not.toMatch(/did not stop within the grace period|internal error|\n\s+at /);
    expect(Date.now() - signalledAt).toBeLessThan(8_000);
  } finally {
    sandbox.setLatency(null);
  }
});
