/**
 * Issue 42, item 5: the workers of `run --workers` end with their parent. The parent is killed with
 * SIGKILL while its four workers export (slowly: one request at a time, each answered after 1 s); every
 * worker process is gone within seconds, each having given its lease back (or being a dead process
 * of this machine, whose lease the next run takes over at once), and the next `run --workers 4`
 * completes the export: every row of the source once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { parseLease, type LeaseRecord } from '../../src/state/lease.js';
import { pidAlive } from '../../src/process-identity.js';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { aliceTransactionIds, aliceTransactionsJob, readNdjsonExport, runCli, useTestCli, writeJob } from './harness.js';

const sandbox = useSandbox();
const work = useTestCli('workers-parent-');
const WORKERS = 4;
/** How long the workers may take to stop: a run that does not stop ends itself after 10 s (STOP_GRACE_MS). */
const STOP_DEADLINE_MS = 15_000;

const job = (destination: string) => ({
  ...aliceTransactionsJob(sandbox, 'orphans', '1h', destination),
  output: { format: 'ndjson', destination, batch_windows: 'off' },
});

/** The lease records of the workers (shards i/4) at a local destination. */
function workerLeases(out: string): LeaseRecord[] {
  return listFiles(out)
    .filter((k) => new RegExp(`^_state/orphans/lease-shard-\\d+-of-${WORKERS}\\.json$`).test(k))
    .map((k) => parseLease(readFileSync(join(out, k)))!)
    .filter((r) => r !== null);
}

const started: number[] = [];
afterEach(() => {
  sandbox.setLatency(null);
  // Workers that outlived the test (it failed) are not left running.
  for (const pid of started) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
});

it(
  'SIGKILL of the parent: every worker stops within seconds and gives its lease back; the next run completes the export',
  { timeout: 240_000 },
  async () => {
    const base = join(work.dir, 'killed');
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(out));
    let killedAt = 0;
    // Slow answers: the workers would run on for a minute or more.
    sandbox.setLatency({ fixedMs: 1_000, jitterMs: 0 });
    const killed = await runCli(
      work.cli,
      ['run', jobFile, '--workers', String(WORKERS), '--requests-in-flight', '1', '--log-level', 'warn'],
      {
        onSpawn: (parent) => {
          // Once every worker holds its lease, the parent is killed.
          const poll = setInterval(() => {
            const held = workerLeases(out).filter((r) => !r.released);
            if (held.length < WORKERS) return;
            clearInterval(poll);
            started.push(...held.map((r) => r.pid));
            killedAt = Date.now();
            parent.kill('SIGKILL');
          }, 20);
          parent.on('close', () => clearInterval(poll));
        },
      },
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(started).toHaveLength(WORKERS);

    while (started.some(pidAlive) && Date.now() - killedAt < STOP_DEADLINE_MS) await new Promise((r) => setTimeout(r, 50));
    const stoppedMs = Date.now() - killedAt;
    expect(started.filter(pidAlive), `workers still running ${stoppedMs} ms after their parent was killed`).toEqual([]);
    sandbox.setLatency(null);
    console.log(`[workers] ${WORKERS} workers stopped ${stoppedMs} ms after their parent's SIGKILL`);
    // Each gave its lease back as it stopped.
    const leases = workerLeases(out);
    expect(leases.map((r) => `${r.pid} ${r.released === true ? 'released' : 'held'}`).sort()).toEqual(
      started.map((pid) => `${pid} released`).sort(),
    );

    const next = await runCli(work.cli, ['run', jobFile, '--workers', String(WORKERS), '--log-level', 'warn']);
    expect(next.code, next.stderr).toBe(0);
    const ids = readNdjsonExport(out).itemIds;
    expect(ids.length - new Set(ids).size, 'rows written twice').toBe(0);
    expect([...ids].sort()).toEqual(aliceTransactionIds(sandbox).sort());
  },
);
