import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import {
  acquireLease,
  leaseKey,
  LeaseHeldError,
  LeaseLostError,
  parseLease,
  type Lease,
  type LeaseOptions,
} from '../../src/state/lease.js';
import { PreconditionFailedError, StoreUnavailableError } from '../../src/store/errors.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';

const bucket = useTestBucket('lease');
const tmp = useTempDir('lease-test-');

/** A run on another machine: its pid cannot be checked, only its lease's expiry counts. */
const remote = (n: number): LeaseOptions['identity'] => ({ host: `worker-${n}`, pid: 1000 + n, bootId: `boot-${n}` });
const here = { host: 'this-host', bootId: 'this-boot' };

let seq = 0;
const stores: [string, () => ObjectStore][] = [
  ['local directory', () => new LocalStore(join(tmp.dir, `s${seq++}`))],
  ['S3 (radosgw)', () => bucket.store(`p${seq++}`)],
];

describe.each(stores)('lease on %s', (_name, makeStore) => {
  it('admits exactly one of eight runs that start at once', async () => {
    const store = makeStore();
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => acquireLease(store, 'job-a', { runId: `run-${i}`, identity: remote(i), ttlMs: 60_000 })),
    );
    const won = results.filter((r): r is PromiseFulfilledResult<Lease> => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    console.log(`[lease] racing acquisitions: ${won.length} won, ${refused.length} refused`);
    expect(won).toHaveLength(1);
    for (const r of refused) {
      expect(r.reason).toBeInstanceOf(LeaseHeldError);
      expect((r.reason as LeaseHeldError).exitCode).toBe(ExitCode.busy);
      expect((r.reason as LeaseHeldError).holder.run_id).toBe(won[0]!.value.runId);
    }
    const stored = parseLease((await store.get(leaseKey('job-a')))!.body)!;
    expect(stored.run_id).toBe(won[0]!.value.runId);
    await won[0]!.value.release();
  });

  it('lets exactly one of several runs take over an expired lease', async () => {
    const store = makeStore();
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const crashed = await acquireLease(store, 'job-b', { runId: 'crashed', identity: remote(99), ttlMs: 30_000, now: () => clock });
    // The holder dies without releasing (its renewals, every 7.5 s of real time, do not come in this test).
    await expect(acquireLease(store, 'job-b', { runId: 'early', identity: remote(1), now: () => clock })).rejects.toBeInstanceOf(
      LeaseHeldError,
    );
    clock += 30_001;
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        acquireLease(store, 'job-b', { runId: `late-${i}`, identity: remote(i), ttlMs: 30_000, now: () => clock }),
      ),
    );
    const won = results.filter((r): r is PromiseFulfilledResult<Lease> => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof LeaseHeldError)).toBe(
      true,
    );
    // The crashed holder, should it come back, has lost it: its renewal is refused.
    await crashed.renew();
    expect(crashed.lost.aborted).toBe(true);
    expect(() => crashed.assertHeld()).toThrow(LeaseLostError);
    await won[0]!.value.release();
  });

  it('is taken at once after a release, and at once from a dead process of this machine', async () => {
    const store = makeStore();
    const first = await acquireLease(store, 'job-c', { runId: 'first', identity: remote(1) });
    await first.release();
    expect(parseLease((await store.get(leaseKey('job-c')))!.body)!.released).toBe(true);
    await acquireLease(store, 'job-c', { runId: 'second', identity: { ...here, pid: 4242 }, isAlive: () => true });
    // "crashes" (never released)
    // Same host and boot, pid alive: held.
    await expect(
      acquireLease(store, 'job-c', { runId: 'third', identity: { ...here, pid: 1 }, isAlive: () => true }),
    ).rejects.toBeInstanceOf(LeaseHeldError);
    // Same host and boot, pid gone: taken over without waiting for the expiry.
    const third = await acquireLease(store, 'job-c', { runId: 'third', identity: { ...here, pid: 1 }, isAlive: (pid) => pid !== 4242 });
    expect(third.runId).toBe('third');
    // Another machine with a pid that happens to be dead here: its lease is not ours to judge.
    await third.release();
    const other = await acquireLease(store, 'job-c', { runId: 'other', identity: { host: 'elsewhere', pid: 7, bootId: 'b' } });
    expect(other.runId).toBe('other');
    await expect(acquireLease(store, 'job-c', { runId: 'x', identity: { ...here, pid: 1 }, isAlive: () => false })).rejects.toBeInstanceOf(
      LeaseHeldError,
    );
  });

  it('renews itself while held and stops the run when another run takes it over', async () => {
    const store = makeStore();
    // A TTL that a loaded CI machine's pauses cannot eat (assertHeld wants a tenth of it left).
    const lease = await acquireLease(store, 'job-d', { runId: 'renewing', identity: remote(1), ttlMs: 2_000, renewEveryMs: 100 });
    const first = parseLease((await store.get(leaseKey('job-d')))!.body)!;
    await sleep(2_500); // longer than the TTL: only renewals keep it
    const later = parseLease((await store.get(leaseKey('job-d')))!.body)!;
    expect(Date.parse(later.expires_at)).toBeGreaterThan(Date.parse(first.expires_at));
    expect(() => lease.assertHeld()).not.toThrow();
    // Another run that judged the lease expired takes it over as acquireLease does: If-Match on
    // the ETag it read. (An unconditional PUT would not do: radosgw lets a conditional PUT that
    // races with it win and still answers 200 to both, so a usurper's plain write can vanish.)
    await usurp(store, leaseKey('job-d'), { ...later, run_id: 'usurper' });
    // The next renewal finds the usurper; on a loaded S3 server one write can take longer than the period.
    const deadline = Date.now() + 5_000;
    while (!lease.lost.aborted && Date.now() < deadline) await sleep(25);
    expect(lease.lost.aborted).toBe(true);
    expect(lease.lost.reason).toBeInstanceOf(LeaseLostError);
    expect(() => lease.assertHeld()).toThrow(/lost its lease/);
    await lease.release(); // does not overwrite the usurper's lease
    expect(parseLease((await store.get(leaseKey('job-d')))!.body)!.run_id).toBe('usurper');
  });
});

/** Replaces the lease object with a compare-and-swap, reading again when a renewal got in first. */
async function usurp(store: ObjectStore, key: string, record: object): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const current = (await store.get(key))!;
    try {
      await store.put(key, JSON.stringify(record), { ifMatch: current.etag });
      return;
    } catch (err) {
      // A renewal got in first: 412, or radosgw's 500 for a lost race once the SDK's retries are spent.
      if (!(err instanceof PreconditionFailedError) && !(err instanceof StoreUnavailableError)) throw err;
    }
  }
  throw new Error(`could not take over ${key} in 100 attempts`);
}

it('a run that cannot renew (store unreachable) stops writing before its lease expires', async () => {
  const store = new LocalStore(join(tmp.dir, 'unreachable'));
  let clock = 1_000_000;
  const lease = await acquireLease(store, 'job-e', {
    runId: 'r',
    identity: remote(1),
    ttlMs: 10_000,
    renewEveryMs: 3_600_000,
    now: () => clock,
  });
  const put = store.put.bind(store);
  store.put = async () => {
    throw new Error('connect ECONNREFUSED');
  };
  clock += 5_000;
  await lease.renew();
  expect(lease.lost.aborted).toBe(false);
  expect(() => lease.assertHeld()).not.toThrow();
  clock += 4_500; // within a tenth of the TTL of the expiry: no more writes
  expect(() => lease.assertHeld()).toThrow(LeaseLostError);
  store.put = put;
  await lease.release();
});
