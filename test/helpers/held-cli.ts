/**
 * A CLI run (the test build of test/reliability/harness.ts) held at the crash points' holds
 * (INSIGHT_TEST_HOLD, test/reliability/fixtures/crash-points.ts) until the test lets it go: the
 * test orders one process's steps against another's. The processes it starts (a run's workers)
 * inherit the holds and share the folder, so the first of them to arrive makes `<point>-<n>.held`.
 * A run the test did not wait for (it failed first) is let go and killed after the test.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { runCli, type CliResult, type TestCli } from '../reliability/harness.js';

export interface HeldRun {
  /** The run's end. */
  done: Promise<CliResult>;
  /** Resolves once the run (or one of its workers) waits at `hold`; fails if it ended before. */
  reached(hold: string): Promise<void>;
  /** Lets every process waiting at `hold` go on. */
  release(hold: string): void;
}

const unfinished = new Set<() => void>();
afterEach(() => {
  for (const stop of unfinished) stop();
  unfinished.clear();
});

export function heldRun(cli: TestCli, args: string[], holdDir: string, holds: string[], env: Record<string, string> = {}): HeldRun {
  mkdirSync(holdDir, { recursive: true });
  const name = (hold: string) => join(holdDir, hold.replace(':', '-'));
  let child: ChildProcess | undefined;
  const stop = () => {
    for (const hold of holds) writeFileSync(`${name(hold)}.go`, '');
    child?.kill('SIGKILL');
  };
  unfinished.add(stop);
  let ended = false;
  const done = runCli(cli, args, {
    env: { ...env, INSIGHT_TEST_HOLD: holds.join(','), INSIGHT_TEST_HOLD_DIR: holdDir },
    timeoutMs: 240_000,
    onSpawn: (c) => (child = c),
  }).finally(() => {
    ended = true;
    unfinished.delete(stop);
  });
  return {
    done,
    async reached(hold) {
      while (!existsSync(`${name(hold)}.held`)) {
        if (ended) {
          const r = await done;
          throw new Error(`${args.join(' ')} ended (${r.code}) before ${hold}: ${r.stderr.slice(-2000)}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    release: (hold) => writeFileSync(`${name(hold)}.go`, ''),
  };
}
