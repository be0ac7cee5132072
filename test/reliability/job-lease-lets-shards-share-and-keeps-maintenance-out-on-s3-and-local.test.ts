/**
 * Issue 42, item 5: the job lease protocol (src/state/job-lease.ts) on a local folder and on S3
 * (radosgw): shard entries are held side by side; the exclusive entry (a run of the whole job,
 * compact, expire-snapshots, remove-orphan-files, release) is refused while any shard holds its
 * entry and refuses every shard while it is held, each naming the holder and holding nothing after
 * the refusal; acquirers racing both ways never end with the exclusive entry and a shard entry
 * held at once, nor both given up; dead and expired holders keep nobody out; entries the listing shows unwritten for
 * longer than any lease lasts cost no read.
 */
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireJobLease, WHOLE_JOB_SHARD, type JobLeaseOptions } from '../../src/state/job-lease.js';
import { leaseKey, LeaseHeldError, MAX_LEASE_TTL_MS, parseLease, type Lease } from '../../src/state/lease.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';

const bucket = useTestBucket('job-lease');
const tmp = useTempDir('job-lease-test-');

/** A process on another machine: only its lease's expiry counts. */
const remote = (n: number): JobLeaseOptions['identity'] => ({ host: `worker-${n}`, pid: 1000 + n, bootId: `boot-${n}` });
const whole = (n: number, extra: Partial<JobLeaseOptions> = {}): JobLeaseOptions => ({
  runId: `whole-${n}`,
  shard: null,
  command: 'compact',
  identity: remote(n),
  ...extra,
});
const shard = (index: number, count: number, n = index): JobLeaseOptions => ({
  runId: `shard-${index}-${count}-${n}`,
  shard: { index, count },
  command: `run --shard ${index}/${count}`,
  identity: remote(100 + n),
});

let seq = 0;
const stores: [string, () => ObjectStore][] = [
  ['local directory', () => new LocalStore(join(tmp.dir, `s${seq++}`))],
  ['S3 (radosgw)', () => bucket.store(`p${seq++}`)],
];

async function refused(p: Promise<Lease>): Promise<LeaseHeldError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LeaseHeldError);
  return err as LeaseHeldError;
}

describe.each(stores)('job lease on %s', (_name, makeStore) => {
  it('shards share; the exclusive entry waits for every shard, and every shard for it', async () => {
    const store = makeStore();
    const shards = await Promise.all([acquireJobLease(store, 'j', shard(0, 2)), acquireJobLease(store, 'j', shard(1, 2))]);
    const busy = await refused(acquireJobLease(store, 'j', whole(1)));
    expect(busy.message).toMatch(/^Another run of this job is in progress \(run shard-[01]-2-[01] on worker-10[01]:110[01]\)/);
    expect(busy.details).toMatch(
      /_state\/j\/lease-shard-[01]-of-2\.json: run --shard [01]\/2, held until \S+ \(since \S+, renewed at \S+\)/,
    );
    // The refused acquirer gave the exclusive entry back: the shards' next run is not kept out by it.
    expect(parseLease((await store.get(leaseKey('j')))!.body)!.released).toBe(true);
    await shards[0]!.release();
    await refused(acquireJobLease(store, 'j', whole(2)));
    await shards[1]!.release();

    const compact = await acquireJobLease(store, 'j', whole(3));
    // Seen a while after compact took it: refused at once (an entry taken moments ago is read again for a few seconds).
    const later = () => Date.now() + 15_000;
    for (const s of [shard(0, 2, 5), shard(3, 4), { ...shard(0, 1), shard: WHOLE_JOB_SHARD, command: 'run --workers 4' }]) {
      const err = await refused(acquireJobLease(store, 'j', { ...s, now: later }));
      expect(err.message).toMatch(/^`compact` of this job is in progress \(run whole-3 on worker-3:1003\)/);
      expect(err.details).toMatch(/_state\/j\/lease\.json: compact, held until/);
    }
    // A second exclusive holder is refused by the entry itself.
    await refused(acquireJobLease(store, 'j', whole(4, { command: 'run' })));
    await compact.release();
    const after = await acquireJobLease(store, 'j', shard(1, 2, 7));
    for (const k of ['lease-shard-0-of-2.json', 'lease-shard-3-of-4.json', 'lease-shard-0-of-1.json'])
      expect(parseLease((await store.get(leaseKey('j', k)))!.body)!.released, k).toBe(true);
    await after.release();
  });

  it('an exclusive acquirer racing shard acquirers: never both held, never both given up', { timeout: 60_000 }, async () => {
    const store = makeStore();
    const outcomes = { exclusive: 0, shards: 0, none: 0 };
    for (let round = 0; round < 12; round++) {
      const job = `race-${round}`;
      const starts = [
        () => acquireJobLease(store, job, whole(round)),
        ...[0, 1, 2].map((i) => () => acquireJobLease(store, job, shard(i, 3, round * 3 + i))),
      ];
      // Started in a different order each round: each side's write falls before or after the other's read.
      if (round % 2 === 1) starts.reverse();
      const results = await Promise.allSettled(starts.map((start) => start()));
      const won = results.filter((r): r is PromiseFulfilledResult<Lease> => r.status === 'fulfilled').map((r) => r.value);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(LeaseHeldError);
      const exclusive = won.filter((l) => l.key === leaseKey(job));
      expect(exclusive.length === 0 || won.length === 1, `round ${round}: ${won.map((l) => l.key).join(', ')}`).toBe(true);
      outcomes[exclusive.length > 0 ? 'exclusive' : won.length > 0 ? 'shards' : 'none']++;
      await Promise.all(won.map((l) => l.release()));
    }
    // Shards that find an exclusive entry taken moments ago read it again: it is given back, not both.
    expect(outcomes.none).toBe(0);
    console.log(`[job-lease] 12 races of 1 exclusive and 3 shard acquirers: ${JSON.stringify(outcomes)}`);
  });

  it('a shard entry of a dead process of this machine, or an expired one, keeps nobody out', async () => {
    const store = makeStore();
    const here = { host: 'this-host', bootId: 'this-boot' };
    await acquireJobLease(store, 'd', { ...shard(0, 2), identity: { ...here, pid: 4242 }, isAlive: () => true }); // never released
    let clock = Date.now();
    await acquireJobLease(store, 'd', { ...shard(1, 2), ttlMs: 30_000, now: () => clock }); // never released
    clock += 30_001;
    const compact = await acquireJobLease(store, 'd', {
      ...whole(1),
      identity: { ...here, pid: 1 },
      isAlive: (pid) => pid !== 4242,
      now: () => clock,
    });
    await compact.release();
  });
});

it('an exclusive acquirer reads no shard entry the listing shows unwritten for longer than any lease lasts', async () => {
  const root = join(tmp.dir, 'old-entries');
  const store = new LocalStore(root);
  for (let i = 0; i < 8; i++) await (await acquireJobLease(store, 'o', shard(i, 8))).release();
  const old = new Date(Date.now() - MAX_LEASE_TTL_MS - 3_600_000);
  for (let i = 0; i < 8; i++) await utimes(join(root, '_state/o', `lease-shard-${i}-of-8.json`), old, old);
  const fresh = await acquireJobLease(store, 'o', shard(3, 4));
  await fresh.release();
  const read: string[] = [];
  const get = store.get.bind(store);
  store.get = async (key) => {
    read.push(key);
    return get(key);
  };
  const compact = await acquireJobLease(store, 'o', whole(1));
  expect(read).toEqual(['_state/o/lease-shard-3-of-4.json']);
  await compact.release();
});
